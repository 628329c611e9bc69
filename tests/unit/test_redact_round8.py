"""Redaction's misses by cause (the eighth corpus's round): passwords in prose by one grammar (label, whose, "is"),
the password flags of common tools, passwords and keys in code (Go `:=`, defaults of environment reads, SQL,
Terraform blocks, key-value rows), a command's printed value labelled by the name it printed, token words and
copulas in more languages, and phone numbers after a qualifier, a "reachable at" or a country code without `+`.
Values and texts written for these tests, each cause with near misses that stay."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
PW = "Vt7^kQ2!mZr9"
KEY = "Rw4Lp9Xq2Nz7Kb5Jc8Hd3Ms6Tf1Gv0Ye"
HEX = "3c9e1f7a2b8d4e6f0a5c9b2d7e1f4a8c"
AWS = "Jq8/Lm3Rz7Xc2Vb9Nw4Ks1Hd6Fg5Tp0Ya+Ue2WoQ"


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("text", [
    f"the password for backup-svc is {PW}",
    f"het wachtwoord van beheer is {PW}",                 # Dutch: "of" and "is"
    f"lösenordet för backup är {PW}",                      # Swedish: the label inflected
    f"heslo pro uživatele ops je {PW}",                    # Czech "je"
    f"hasło dla konta ops to {PW}",                        # Polish
    f"ο κωδικός πρόσβασης του χρήστη είναι {PW}",          # Greek "είναι"
    f"הסיסמה של המשתמש היא {PW}",                          # Hebrew "היא", the article glued to the label
    f"mật khẩu của tài khoản là {PW}",                     # Vietnamese
    f"kata sandi akun ops adalah {PW}",                    # Indonesian
    f"ops şifresi: {PW}",                                  # Turkish possessive suffix, then `:`
    f"备份账户的密码是 {PW}",                                # Chinese: 是 glued to the label
    f"백업 계정 비밀번호는 {PW} 입니다",                      # Korean topic particle
])
def test_passwords_in_prose_by_one_grammar(text: str) -> None:
    assert PW in _values(text), text


@pytest.mark.parametrize("text", [
    "the password for the admin account is required",
    "het wachtwoord van de gebruiker is verlopen",
    "heslo pro tento účet je povinné",
    "密码是必填项",
    "비밀번호는 필수 입력입니다",
    "the password for admin is changeme",
    "the password for the VM is stored in the vault",
    "lösenordet för kontot är ${BACKUP_PW}",
])
def test_password_prose_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text,value", [
    (f"$ docker login registry.example -u ci -p {PW}", PW),
    (f"podman login quay.example --username ci -p {PW}", PW),
    (f"redis-cli -h cache.local -p 6380 -a {PW} INFO", PW),
    (f"ldapsearch -x -D cn=admin,dc=example,dc=org -w {PW} -b dc=example,dc=org", PW),
    (f"smbclient //files/share -U backup%{PW}", PW),
    (f"htpasswd -b /etc/nginx/.htpasswd alice {PW}", PW),
    (f"htpasswd -nb alice {PW}", PW),
    (f"net user svc_backup {PW} /add", PW),
    (f"sqlcmd -S db01 -U sa -P {PW} -Q \"SELECT 1\"", PW),
    (f"mongosh mongodb://db01 -u admin -p {PW}", PW),
])
def test_password_flags_of_common_tools(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "docker run -p 8080:80 nginx",
    "redis-cli -h cache.local -p 6380 PING",
    "mongo -u admin -p --authenticationDatabase admin",
    "net user svc_backup /delete",
    "ldapsearch -x -W -D cn=admin,dc=example,dc=org",
    "htpasswd -c /etc/nginx/.htpasswd alice",
    "docker login -u ci -p $REGISTRY_PASSWORD registry.example",
])
def test_tool_flag_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text,value", [
    (f'smtpPass := "{PW}"', PW),                                            # Go
    (f"const smtpPassword = process.env.SMTP_PASSWORD ?? '{PW}';", PW),      # a default in JS
    (f'db_password = os.getenv("DB_PASSWORD", "{PW}")', PW),                # Python
    (f"psql -U app -W \"${{PGPASSWORD:-{PW}}}\"", PW),                       # the shell's default
    (f"CREATE USER 'report'@'%' IDENTIFIED BY '{PW}';", PW),                # MySQL
    (f"ALTER USER report WITH PASSWORD '{PW}';", PW),                        # PostgreSQL
    (f"SET PASSWORD FOR 'report'@'localhost' = '{PW}';", PW),
    (f"INSERT INTO settings (name, value) VALUES ('smtp_password', '{PW}');", PW),  # a key-value row
    (f'variable "smtp_password" {{\n  default   = "{PW}"\n  sensitive = true\n}}', PW),  # Terraform
    (f'awsSecretAccessKey := "{AWS}"', AWS),
    (f"const awsSecretKey = process.env.AWS_SECRET_KEY || '{AWS}';", AWS),
    (f'output "aws_secret_access_key" {{\n  value = "{AWS}"\n}}', AWS),
])
def test_passwords_and_keys_in_code(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    'smtpPass := os.Getenv("SMTP_PASS")',
    "const smtpPassword = process.env.SMTP_PASSWORD ?? '';",
    'db_password = os.getenv("DB_PASSWORD", "")',
    "password: ${PW}",
    "INSERT INTO settings (name, value) VALUES ('theme', 'dark-mode-2');",
    'variable "region" {\n  default = "eu-west-1"\n}',
    "ALTER USER report WITH PASSWORD NULL;",
])
def test_code_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text,value", [
    (f"$ kubectl get secret api -o jsonpath='{{.data.SMTP_PASSWORD}}' | base64 -d\n{PW}\n", PW),
    (f"$ kubectl get secret aws -o jsonpath=\"{{.data.AWS_SECRET_ACCESS_KEY}}\" | base64 --decode\n{AWS}", AWS),
    (f"$ printenv SMTP_PASSWORD\n{PW}\n$ ", PW),
    (f'{{"output": "$ echo $API_TOKEN\\n{KEY}"}}', KEY),
])
def test_a_commands_printed_value_by_the_name_it_printed(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "$ printenv HOME\n/root\n",
    "$ echo $PATH\n/usr/local/bin:/usr/bin\n",
    "$ kubectl get secret api -o jsonpath='{.data.REGION}' | base64 -d\neu-west-1\n",
])
def test_printed_value_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text", [
    f"אסימון הגישה הוא {KEY}",                  # Hebrew token word, "is"
    f"το διακριτικό πρόσβασης είναι {KEY}",     # Greek
    f"přístupový token je {HEX}",               # Czech "je"
    f"het toegangstoken is {KEY}",              # Dutch compound
    f"åtkomsttoken är {KEY}",                   # Swedish compound
    f"액세스 토큰은 {KEY} 입니다",                # Korean particle glued
    f"アクセストークンは {KEY} です",              # Japanese は
    f"访问令牌是 {KEY}",                          # Chinese 令牌, 是
    f"mã truy cập là {HEX}",                    # Vietnamese
    f"erişim belirteci {KEY}",                  # Turkish, a space alone
])
def test_token_words_and_copulas_in_more_languages(text: str) -> None:
    assert (KEY if KEY in text else HEX) in _values(text), text


@pytest.mark.parametrize("text", [
    "het toegangstoken is verlopen",
    "アクセストークンは 有効期限切れです",
    "το διακριτικό πρόσβασης είναι άκυρο",
    "the monkey is 3c9e1f7a-2b8d-4e6f-0a5c-9b2d7e1f4a8c",
])
def test_token_word_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text,value", [
    ("Phone (work) 020 7946 0321", "020 7946 0321"),        # a qualifier in parentheses
    ("Tel. (mobile): 07700 900461", "07700 900461"),
    ("joignable au 06.12.34.56.78", "06.12.34.56.78"),      # "reachable at"
    ("joignable au 0033 6 12 34 56 78", "0033 6 12 34 56 78"),
    ("ruf mich unter 030/1234567 an", "030/1234567"),
    ("Mobile: 91-98765-43210", "91-98765-43210"),           # a country code without `+`
])
def test_phone_context_qualifiers_and_country_codes(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "Phone (work): see the staff directory",
    "joignable au bureau le matin",
    "Mobile: 91-12345",
    "call back later, ticket (urgent) 4471 2281",
    "Número do cartão: 4532-7781-0093-2214",                # a card number (Luhn fails) after "número": no
    "Numéro de carte : 5412 7700 1934 8826 113",            # part of it is a phone number either
])
def test_phone_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text,value", [
    ("Número de telefone: 21 98765-4321", "21 98765-4321"),
    ("Telefon: 030 12345678 (Zentrale)", "030 12345678"),
    ("mobile 98765 43210, ext 2201 2202", "98765 43210"),   # other numbers after it, in another grouping
])
def test_a_phone_number_is_read_whole_before_other_digits(text: str, value: str) -> None:
    assert value in _values(text), text


ENTRA = "Zt57Q~Hq2.Lm9_Xc4~Vb8-Nw1Kd6Rf3Gs0Jp7Ty5"


@pytest.mark.parametrize("text", [
    f"AZURE_CLIENT_SECRET={ENTRA}",
    f'{{"clientSecret": "{ENTRA}", "tenantId": "common"}}',
    f"rotated it, the new one is {ENTRA} (old revoked)",
])
def test_entra_id_client_secrets_by_their_format(text: str) -> None:
    assert ENTRA in _values(text), text


@pytest.mark.parametrize("text", [
    "release 1.2Q~ notes",
    "ABC1Q~SHORT",
])
def test_entra_id_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


UUID = "6f1c2d3e-4a5b-4c7d-8e9f-0a1b2c3d4e5f"


@pytest.mark.parametrize("text", [
    f"Clave API: {UUID}",                         # a key word with API beside it
    f"API-sleutel: {UUID}",
    f"το διακριτικό πρόσβασης είναι {UUID}",       # a token word
    f"访问令牌是 {UUID}",
    f"the secret is {UUID}",
])
def test_a_uuid_after_a_word_naming_a_credential(text: str) -> None:
    assert UUID in _values(text), text


@pytest.mark.parametrize("text", [
    f"key: {UUID}",
    f"the idempotency key is {UUID}",
    f"the trace token is {UUID}",
    f"clave del pedido: {UUID}",
])
def test_uuid_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text
