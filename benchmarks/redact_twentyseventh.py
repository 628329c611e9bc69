"""The twenty-seventh blind redaction corpus: databases and data pipelines as a data or analytics agent's tools
see them. Written from the formats' public specifications by someone who read neither the detection rules nor the
other corpora.

Carriers (the `form` head): query results as the CLIs print them (psql aligned tables and `\\x` expanded records,
mysql boxed tables, sqlite3 list mode, DuckDB CSV, `\\d+` schema introspection beside sample rows), ORM and driver
debug logs whose bound parameters stand apart from their columns (SQLAlchemy `echo` with `[generated in ...]`/
`[parameters: (...)]`, Django `connection.queries`, Hibernate `binding parameter [n] as [VARCHAR] - [...]`, TypeORM
`-- PARAMETERS:`, Prisma query events), dumps (pg_dump `COPY ... FROM stdin;` blocks, mysqldump multi-row INSERTs,
mongoexport lines with `$oid`/`$date`), DataFrame reprs (pandas, Polars box tables, Spark `show(truncate=False)`),
task logs (Airflow, `dbt show`), streams (kafka-console-consumer with keys and headers, Confluent REST v3 records
with base64 headers, Airbyte RECORD messages), stores and query APIs (redis-cli, Elasticsearch hits, BigQuery
getQueryResults, Databricks statement results, DuckDB JSON mode), Great Expectations validation results listing
failing values, an agent's tool results, and the agent's messages to users in 28 languages. About a third is JSON
carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the national numbering plans (NANP with real area codes and no N11 or 555 exchanges, Ofcom without
its drama ranges, ARCEP, BNetzA, TRAI/DoT) with context words in each country's language and some +CC forms; AWS,
IAM's documented AKIA/ASIA ids and 40-character secrets, as Spark s3a, Redshift COPY, Snowflake stages, DuckDB
secrets and STS responses carry them; webhooks as Slack, Discord, Teams (legacy and Power Automate), Google Chat
and Mattermost document their URLs (the secret is the token segment or the `sig`/`token` value only); Stripe
`whsec_` signing secrets (dashboard and CLI forms); connection strings of PostgreSQL, MySQL, MongoDB SRV, Redis,
Snowflake, ClickHouse, JDBC, ODBC and Azure Storage (the secret is the password or account key only); JWT (RFC
7519/7515) as Supabase and PostgREST use them; HTTP Basic (RFC 7617) and Google OAuth `ya29.` Bearer tokens (RFC
6750); PEM PKCS#8/SEC1 and OpenSSH (PROTOCOL.key) keys; session cookies of Django (`django_session.session_key`),
Metabase, Superset/Airflow (Flask), Grafana and Redash; TOTP seeds (RFC 4226/6238 base32 in `otpauth://` URIs,
django-otp hex keys, Keycloak credential JSON); Databricks `dapi` tokens; GitHub `ghp_` (CRC32 checksum) and
`github_pat_` tokens; OpenAI `sk-`/`sk-proj-` keys; Slack `xoxb-` bot tokens; Airflow Fernet keys (32 bytes,
urlsafe base64); Elasticsearch API keys (`id:api_key`, base64 `encoded`); Confluent Cloud API secrets in SASL/PLAIN
JAAS configs. National ids (outside the target): French NIR (97 - n mod 97), Italian codice fiscale (DM 23/12/1976
odd/even tables), Swedish personnummer (Luhn), Finnish HETU (mod 31 letter, old and 2023 century signs), Norwegian
fødselsnummer (two mod 11 digits), Chinese resident id (ISO 7064 MOD 11-2), Brazilian CPF (two mod 11 digits).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, a bound parameter's value). A value in a column or parameter
whose name says what it is (`password`, `otp_secret`) is as secret as one after a label. The disguised kind holds a
credential with a zero-width character, full-width forms, %-encoding or literal JSON `\\u` escapes inside; the
secret is the disguised text as written. Near misses are what databases and pipelines hold that is not secret or
personal in itself: ObjectIds, surrogate keys and UUIDs, LSNs and transaction ids, job/query/run ids, Kafka
offsets, row hashes, timestamps (epoch milliseconds too), amounts, coordinates, column names such as `password`
without a value, placeholders and env references, masked values, versions, businesses' published toll-free lines,
Luhn-invalid numbers, order and tracking numbers, query statistics, the AWS docs' EXAMPLE keys, ISINs and GTINs:
none of them identifies a person or opens anything.
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

SEED = 27
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fr_nir", "it_codice_fiscale", "se_personnummer", "fi_hetu", "no_fodselsnummer",
                            "cn_resident_id", "br_cpf"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
B32 = UPPER + "234567"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"


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

LANGS: dict[str, tuple[str, str, str, str, str]] = {
    "en": ("Here is what the query returned", "Password", "Email", "Phone", "API key"),
    "de": ("Das hat die Abfrage ergeben", "Passwort", "E-Mail", "Telefon", "API-Schlüssel"),
    "fr": ("Voici ce que la requête a renvoyé", "Mot de passe", "E-mail", "Téléphone", "Clé API"),
    "es": ("Esto es lo que devolvió la consulta", "Contraseña", "Correo electrónico", "Teléfono", "Clave de API"),
    "it": ("Ecco cosa ha restituito la query", "Password", "E-mail", "Telefono", "Chiave API"),
    "pt": ("Eis o que a consulta retornou", "Senha", "E-mail", "Telefone", "Chave de API"),
    "nl": ("Dit heeft de query opgeleverd", "Wachtwoord", "E-mailadres", "Telefoon", "API-sleutel"),
    "pl": ("Oto wynik zapytania", "Hasło", "E-mail", "Telefon", "Klucz API"),
    "sv": ("Det här returnerade frågan", "Lösenord", "E-post", "Telefon", "API-nyckel"),
    "da": ("Her er, hvad forespørgslen returnerede", "Adgangskode", "E-mail", "Telefon", "API-nøgle"),
    "nb": ("Dette returnerte spørringen", "Passord", "E-post", "Telefon", "API-nøkkel"),
    "fi": ("Kysely palautti seuraavaa", "Salasana", "Sähköposti", "Puhelin", "API-avain"),
    "cs": ("Dotaz vrátil toto", "Heslo", "E-mail", "Telefon", "Klíč API"),
    "tr": ("Sorgunun döndürdüğü sonuç", "Şifre", "E-posta", "Telefon", "API anahtarı"),
    "ru": ("Вот что вернул запрос", "Пароль", "Эл. почта", "Телефон", "API-ключ"),
    "uk": ("Ось що повернув запит", "Пароль", "Ел. пошта", "Телефон", "API-ключ"),
    "el": ("Αυτό επέστρεψε το ερώτημα", "Κωδικός πρόσβασης", "Email", "Τηλέφωνο", "Κλειδί API"),
    "ar": ("هذه نتيجة الاستعلام", "كلمة المرور", "البريد الإلكتروني", "الهاتف", "مفتاح API"),
    "he": ("זה מה שהשאילתה החזירה", "סיסמה", "אימייל", "טלפון", "מפתח API"),
    "hi": ("क्वेरी ने यह लौटाया", "पासवर्ड", "ईमेल", "फ़ोन", "API कुंजी"),
    "ja": ("クエリの結果は次のとおりです", "パスワード", "メールアドレス", "電話番号", "APIキー"),
    "ko": ("쿼리 결과는 다음과 같습니다", "비밀번호", "이메일", "전화번호", "API 키"),
    "zh": ("查询返回了以下结果", "密码", "电子邮件", "电话", "API 密钥"),
    "vi": ("Đây là kết quả truy vấn", "Mật khẩu", "Email", "Điện thoại", "Khóa API"),
    "id": ("Berikut hasil kueri", "Kata sandi", "Email", "Telepon", "Kunci API"),
    "th": ("นี่คือผลลัพธ์ของคิวรี", "รหัสผ่าน", "อีเมล", "โทรศัพท์", "คีย์ API"),
    "ro": ("Iată ce a returnat interogarea", "Parolă", "E-mail", "Telefon", "Cheie API"),
    "hu": ("A lekérdezés ezt adta vissza", "Jelszó", "E-mail", "Telefon", "API-kulcs"),
}
"""Per language: the agent's opening line, and its labels for password, email, phone and API key."""
LANG_CODES = list(LANGS)


# ---- small helpers --------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random, sep: str = " ") -> str:
    """A 2026 timestamp, `sep` between date and time."""
    return (f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}{sep}{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}")


def _table(rng: random.Random) -> str:
    return rng.choice(["staging.crm_contacts", "raw.hubspot_notes", "analytics.dim_vendor", "ops.integration_config",
                       "raw.zendesk_tickets", "public.service_accounts", "stg.support_messages", "ops.alert_channels"])


def _col(rng: random.Random) -> str:
    return rng.choice(["note", "detail", "payload", "body", "raw_value", "comment", "config", "message"])


def _source(rng: random.Random) -> str:
    return rng.choice(["hubspot", "zendesk", "salesforce", "intercom", "stripe", "segment", "manual", "airbyte"])


def _aligned(headers: list[str], row: list[str], sep: str = " | ") -> tuple[str, str, str]:
    """A psql-style header, rule and row, each cell padded to the widest first line."""
    widths = [max(len(h), len(c.split("\n")[0])) for h, c in zip(headers, row, strict=True)]
    head = sep.join(h.center(w) for h, w in zip(headers, widths, strict=True))
    rule = "-+-".join("-" * w for w in widths)
    line = sep.join(c.ljust(w) for c, w in zip(row, widths, strict=True))
    return " " + head, "-" + rule + "-", " " + line


# ---- text carriers --------------------------------------------------------------------------------------------

def psql_table(rng: random.Random, snip: str, _secret: str) -> str:
    table, col, rid = _table(rng), _col(rng), str(rng.randint(100, 99999))
    head, rule, line = _aligned(["id", "source", col], [rid, _source(rng), snip])
    return (f"analytics=> SELECT id, source, {col} FROM {table} WHERE id = {rid};\n{head}\n{rule}\n{line}\n"
            "(1 row)\n")


def psql_expanded(rng: random.Random, snip: str, _secret: str) -> str:
    col = _col(rng)
    rows = [("id", str(rng.randint(1, 9999))), ("source", _source(rng)), (col, snip), ("updated_at", _ts(rng))]
    width = max(len(k) for k, _ in rows)
    body = "\n".join(f"{k.ljust(width)} | {v}" for k, v in rows)
    return (f"analytics=# \\x\nExpanded display is on.\nanalytics=# SELECT * FROM {_table(rng)} LIMIT 1;\n"
            f"-[ RECORD 1 ]{'-' * (width - 12)}+{'-' * 30}\n{body}\n")


def mysql_table(rng: random.Random, snip: str, _secret: str) -> str:
    col, rid = _col(rng), str(rng.randint(1, 99999))
    w1, w2 = max(2, len(rid)), max(len(col), len(snip.split("\n")[0]))
    border = f"+-{'-' * w1}-+-{'-' * w2}-+"
    return (f"mysql> SELECT id, {col} FROM {_table(rng).split('.')[1]} WHERE id = {rid};\n{border}\n"
            f"| {'id'.ljust(w1)} | {col.ljust(w2)} |\n{border}\n| {rid.ljust(w1)} | {snip.ljust(w2)} |\n{border}\n"
            f"1 row in set (0.0{rng.randint(0, 9)} sec)\n")


def sqlite_list(rng: random.Random, snip: str, _secret: str) -> str:
    n = rng.randint(1, 500)
    return (f"sqlite> .mode list\nsqlite> SELECT rowid, kind, {_col(rng)} FROM events WHERE rowid BETWEEN {n} AND "
            f"{n + 1};\n{n}|import|batch {rng.randint(1, 90)} ok\n{n + 1}|{_source(rng)}|{snip}\n")


def duckdb_csv(rng: random.Random, snip: str, _secret: str) -> str:
    cell, col = (snip if '"' in snip else f'"{snip}"'), _col(rng)
    return (f"$ duckdb warehouse.duckdb -csv -c \"SELECT id, source, {col} FROM {_table(rng)} LIMIT 2\"\n"
            f"id,source,{col}\n{rng.randint(1, 999)},{_source(rng)},\"ok\"\n{rng.randint(1000, 9999)},"
            f"{_source(rng)},{cell}\n")


def sqlalchemy_echo(rng: random.Random, snip: str, _secret: str) -> str:
    ts = _ts(rng) + f",{rng.randint(100, 999)}"
    col = _col(rng)
    if rng.random() < 0.5:
        params = f"[generated in 0.000{rng.randint(10, 99)}s] {{'id_1': {rng.randint(1, 9999)}, '{col}': '{snip}'}}"
    else:
        params = f"[cached since {rng.randint(1, 900)}.2s ago] ({rng.randint(1, 9999)}, '{_source(rng)}', '{snip}')"
    return (f"{ts} INFO sqlalchemy.engine.Engine BEGIN (implicit)\n{ts} INFO sqlalchemy.engine.Engine "
            f"INSERT INTO {_table(rng)} (id, source, {col}) VALUES (%s, %s, %s)\n{ts} INFO sqlalchemy.engine.Engine "
            f"{params}\n{ts} INFO sqlalchemy.engine.Engine COMMIT\n")


def django_queries(rng: random.Random, snip: str, _secret: str) -> str:
    col = _col(rng)
    return (f">>> from django.db import connection\n>>> connection.queries[-1]\n{{'sql': 'UPDATE \"crm_contact\" SET "
            f"\"{col}\" = \\'{snip}\\' WHERE \"crm_contact\".\"id\" = {rng.randint(1, 99999)}', 'time': "
            f"'0.00{rng.randint(1, 9)}'}}\n")


def hibernate_bind(rng: random.Random, snip: str, _secret: str) -> str:
    thread, ts = f"nio-8080-exec-{rng.randint(1, 10)}", _ts(rng, "T") + f".{rng.randint(100, 999)}Z"
    return (f"{ts} DEBUG 1 --- [{thread}] org.hibernate.SQL : update vendor_account set {_col(rng)}=?, "
            f"updated_at=? where id=?\n{ts} TRACE 1 --- [{thread}] o.h.type.descriptor.sql.BasicBinder : binding "
            f"parameter [1] as [VARCHAR] - [{snip}]\n{ts} TRACE 1 --- [{thread}] o.h.type.descriptor.sql.BasicBinder"
            f" : binding parameter [2] as [TIMESTAMP] - [{_ts(rng)}]\n{ts} TRACE 1 --- [{thread}] "
            f"o.h.type.descriptor.sql.BasicBinder : binding parameter [3] as [BIGINT] - [{rng.randint(1, 99999)}]\n")


def typeorm_log(rng: random.Random, snip: str, _secret: str) -> str:
    return (f"query: INSERT INTO \"integration_event\"(\"id\", \"source\", \"{_col(rng)}\") VALUES (DEFAULT, $1, $2) "
            f"RETURNING \"id\" -- PARAMETERS: [\"{_source(rng)}\",\"{snip}\"]\nquery: COMMIT\n")


def pg_dump_copy(rng: random.Random, snip: str, _secret: str) -> str:
    table = _table(rng)
    return (f"--\n-- Data for Name: {table.split('.')[1]}; Type: TABLE DATA; Schema: {table.split('.')[0]}; Owner: "
            f"app\n--\n\nCOPY {table} (id, source, {_col(rng)}, created_at) FROM stdin;\n"
            f"{rng.randint(1, 500)}\t{_source(rng)}\t\\N\t{_ts(rng)}+00\n"
            f"{rng.randint(501, 999)}\t{_source(rng)}\t{snip}\t{_ts(rng)}+00\n\\.\n")


def mysqldump_insert(rng: random.Random, snip: str, _secret: str) -> str:
    table = _table(rng).split(".")[1]
    a, b = rng.randint(1, 500), rng.randint(501, 999)
    return (f"--\n-- Dumping data for table `{table}`\n--\n\nLOCK TABLES `{table}` WRITE;\n/*!40000 ALTER TABLE "
            f"`{table}` DISABLE KEYS */;\nINSERT INTO `{table}` VALUES ({a},'{_source(rng)}',NULL,'{_ts(rng)}'),"
            f"({b},'{_source(rng)}','{snip}','{_ts(rng)}');\n/*!40000 ALTER TABLE `{table}` ENABLE KEYS */;\n"
            "UNLOCK TABLES;\n")


def pandas_repr(rng: random.Random, snip: str, _secret: str) -> str:
    col, uid = _col(rng), rng.randint(1000, 9000)
    return (f">>> pd.set_option(\"display.max_colwidth\", None)\n>>> df.iloc[[0, {rng.randint(1, 40)}]]\n"
            f"    user_id    source  {col}\n0      {uid}  {_source(rng)}  ...\n{rng.randint(1, 40)}     {uid + 7}  "
            f"{_source(rng)}  {snip}\n\n[2 rows x 3 columns]\n")


def polars_repr(rng: random.Random, snip: str, _secret: str) -> str:
    col = _col(rng)
    w = max(len(col), len(snip.split("\n")[0]))
    return (f"shape: (1, 2)\n┌─────────┬─{'─' * w}─┐\n│ user_id ┆ {col.ljust(w)} │\n│ ---     ┆ {'---'.ljust(w)} │\n"
            f"│ i64     ┆ {'str'.ljust(w)} │\n╞═════════╪═{'═' * w}═╡\n│ {str(rng.randint(1000, 9999)).ljust(7)} ┆ "
            f"{snip.ljust(w)} │\n└─────────┴─{'─' * w}─┘\n")


def spark_show(rng: random.Random, snip: str, _secret: str) -> str:
    col = _col(rng)
    w = max(len(col), len(snip.split("\n")[0]))
    rule = f"+----+{'-' * w}+"
    return (f"26/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d} 10:{rng.randint(10, 59)}:{rng.randint(10, 59)} "
            f"INFO DAGScheduler: Job {rng.randint(1, 90)} finished: showString at NativeMethodAccessorImpl.java:0\n"
            f">>> df.filter(\"source = '{_source(rng)}'\").select(\"id\", \"{col}\").show(truncate=False)\n{rule}\n"
            f"|id  |{col.ljust(w)}|\n{rule}\n|{str(rng.randint(1, 9999)).ljust(4)}|{snip.ljust(w)}|\n{rule}\n")


def airflow_log(rng: random.Random, snip: str, _secret: str) -> str:
    stamp = (f"[2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}, 0{rng.randint(0, 9)}:"
             f"{rng.randint(10, 59)}:00 UTC]")
    dag = rng.choice(["sync_crm", "load_billing", "refresh_marts", "export_partners"])
    return (f"{stamp} {{taskinstance.py:2612}} INFO - Running <TaskInstance: {dag}.extract scheduled__2026-03-01T00"
            f":00:00+00:00 [running]> on host worker-{rng.randint(1, 9)}\n{stamp} {{logging_mixin.py:188}} INFO - "
            f"{snip}\n{stamp} {{taskinstance.py:1206}} INFO - Marking task as SUCCESS. dag_id={dag}, task_id=extract\n")


def dbt_show(rng: random.Random, snip: str, _secret: str) -> str:
    col = _col(rng)
    w = max(len(col), len(snip.split("\n")[0]))
    return (f"10:{rng.randint(10, 59)}:{rng.randint(10, 59)}  Running with dbt=1.8.{rng.randint(0, 7)}\n10:"
            f"{rng.randint(10, 59)}:{rng.randint(10, 59)}  Previewing node 'stg_{_source(rng)}__records':\n"
            f"| record_id | {col.ljust(w)} |\n| --------- | {'-' * w} |\n| {str(rng.randint(1, 99999)).rjust(9)} | "
            f"{snip.ljust(w)} |\n")


def kafka_console(rng: random.Random, snip: str, _secret: str) -> str:
    topic = rng.choice(["crm.contacts.v1", "billing.events", "cdc.public.accounts", "ops.integrations"])
    trace = f"00-{pick(rng, HEX, 32)}-{pick(rng, HEX, 16)}-01"
    return (f"$ kafka-console-consumer --bootstrap-server broker-1:9092 --topic {topic} --partition "
            f"{rng.randint(0, 11)} --offset {rng.randint(1000, 999999)} --max-messages 1 --property print.key=true "
            f"--property print.headers=true\ncontent-type:application/json,traceparent:{trace}\t"
            f"rec-{rng.randint(1000, 99999)}\t{snip}\nProcessed a total of 1 messages\n")


def redis_cli(rng: random.Random, snip: str, _secret: str) -> str:
    key = f"{rng.choice(['cfg', 'job', 'tenant', 'sync'])}:{rng.randint(1, 9999)}"
    return (f"127.0.0.1:6379> HGETALL {key}\n1) \"source\"\n2) \"{_source(rng)}\"\n3) \"{_col(rng)}\"\n4) \"{snip}\"\n"
            f"127.0.0.1:6379> TTL {key}\n(integer) {rng.randint(60, 86400)}\n")


def schema_sample(rng: random.Random, snip: str, _secret: str) -> str:
    table, col = _table(rng), _col(rng)
    head, rule, line = _aligned(["id", col], [str(rng.randint(1, 999)), snip])
    return (f"analytics=> \\d {table}\n        Table \"{table}\"\n   Column   |  Type  | Nullable\n"
            f"------------+--------+----------\n id         | bigint | not null\n {col.ljust(10)} | text   |\n\n"
            f"analytics=> SELECT id, {col} FROM {table} TABLESAMPLE SYSTEM (1) LIMIT 1;\n{head}\n{rule}\n{line}\n"
            "(1 row)\n")


def agent_message(rng: random.Random, snip: str, _secret: str) -> str:
    intro = LANGS[rng.choice(LANG_CODES)][0]
    return f"{intro} (`{_table(rng)}`, 1 row):\n\n{snip}\n"


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "psql_table": psql_table, "psql_expanded": psql_expanded, "mysql_table": mysql_table, "sqlite_list": sqlite_list,
    "duckdb_csv": duckdb_csv, "sqlalchemy_echo": sqlalchemy_echo, "django_queries": django_queries,
    "hibernate_bind": hibernate_bind, "typeorm_log": typeorm_log, "pg_dump_copy": pg_dump_copy,
    "mysqldump_insert": mysqldump_insert, "pandas_repr": pandas_repr, "polars_repr": polars_repr,
    "spark_show": spark_show, "airflow_log": airflow_log, "dbt_show": dbt_show, "kafka_console": kafka_console,
    "redis_cli": redis_cli, "schema_sample": schema_sample, "agent_message": agent_message}


# ---- JSON carriers --------------------------------------------------------------------------------------------

def mongoexport(rng: random.Random, snip: str, _secret: str) -> str:
    return _dump({"_id": {"$oid": pick(rng, HEX, 24)}, "source": _source(rng), _col(rng): snip,
                  "updatedAt": {"$date": _ts(rng, "T") + ".000Z"}})


def prisma_log(rng: random.Random, snip: str, _secret: str) -> str:
    col = _col(rng)
    return _dump({"timestamp": _ts(rng, "T") + ".412Z", "query": f"UPDATE \"public\".\"Integration\" SET \"{col}\" = "
                  "$1 WHERE \"public\".\"Integration\".\"id\" = $2", "params": f"[\"{snip}\",{rng.randint(1, 9999)}]",
                  "duration": rng.randint(1, 40), "target": "quaint::connectors::metrics"})


def es_hits(rng: random.Random, snip: str, _secret: str) -> str:
    return _dump({"took": rng.randint(1, 90), "timed_out": False, "hits": {"total": {"value": 1, "relation": "eq"},
                  "hits": [{"_index": f"support-{rng.randint(2024, 2026)}.{rng.randint(1, 12):02d}",
                            "_id": pick(rng, URLSAFE, 20), "_score": round(rng.uniform(1, 12), 4),
                            "_source": {"channel": _source(rng), _col(rng): snip}}]}})


def bigquery_rows(rng: random.Random, snip: str, _secret: str) -> str:
    col = _col(rng)
    return _dump({"kind": "bigquery#getQueryResultsResponse", "schema": {"fields": [
        {"name": "id", "type": "INTEGER", "mode": "NULLABLE"}, {"name": col, "type": "STRING", "mode": "NULLABLE"}]},
        "jobReference": {"projectId": f"acme-analytics-{rng.randint(100, 999)}",
                         "jobId": f"bquxjob_{pick(rng, HEX, 8)}_{pick(rng, HEX, 12)}", "location": "EU"},
        "totalRows": "1",
        "rows": [{"f": [{"v": str(rng.randint(1, 99999))}, {"v": snip}]}], "jobComplete": True, "cacheHit": False})


def kafka_rest(rng: random.Random, snip: str, _secret: str) -> str:
    trace = base64.b64encode(f"00-{pick(rng, HEX, 32)}-{pick(rng, HEX, 16)}-01".encode()).decode()
    return _dump({"cluster_id": pick(rng, URLSAFE, 22), "topic_name": "ops.integrations", "partition_id":
                  rng.randint(0, 11), "offset": rng.randint(1000, 999999), "timestamp": _ts(rng, "T") + "Z",
                  "headers": [{"name": "traceparent", "value": trace}], "key": {"type": "STRING", "data":
                  f"rec-{rng.randint(1000, 99999)}"}, "value": {"type": "JSON", "data": {_col(rng): snip}}})


def ge_validation(rng: random.Random, snip: str, _secret: str) -> str:
    col, total = _col(rng), rng.randint(1000, 90000)
    return _dump({"success": False, "expectation_config": {"expectation_type": "expect_column_values_to_match_regex",
                  "kwargs": {"column": col, "regex": "^[A-Za-z .,-]{0,200}$", "mostly": 1.0}}, "result": {
                  "element_count": total, "unexpected_count": 1, "unexpected_percent": round(100 / total, 6),
                  "partial_unexpected_list": [snip]}, "meta": {"checkpoint": f"{_source(rng)}_nightly"}})


def airbyte_record(rng: random.Random, snip: str, _secret: str) -> str:
    return _dump({"type": "RECORD", "record": {"stream": f"{_source(rng)}_records", "data": {
        "id": rng.randint(1, 99999), _col(rng): snip},
        "emitted_at": rng.randint(1_760_000_000_000, 1_790_000_000_000)}})


def duckdb_json(rng: random.Random, snip: str, _secret: str) -> str:
    col = _col(rng)
    return _dump([{"id": rng.randint(1, 500), "source": _source(rng), col: None},
                  {"id": rng.randint(501, 999), "source": _source(rng), col: snip}])


def databricks_statement(rng: random.Random, snip: str, _secret: str) -> str:
    col = _col(rng)
    return _dump({"statement_id": f"01ef{pick(rng, HEX, 4)}-{pick(rng, HEX, 4)}-{pick(rng, HEX, 4)}-"
                  f"{pick(rng, HEX, 4)}-{pick(rng, HEX, 12)}", "status": {"state": "SUCCEEDED"}, "manifest": {
                  "format": "JSON_ARRAY", "schema": {"column_count": 2, "columns": [
                      {"name": "id", "type_name": "LONG", "position": 0},
                      {"name": col, "type_name": "STRING", "position": 1}]}, "total_row_count": 1},
                  "result": {"chunk_index": 0, "row_offset": 0, "row_count": 1,
                             "data_array": [[str(rng.randint(1, 99999)), snip]]}})


def agent_tool_result(rng: random.Random, snip: str, _secret: str) -> str:
    return _dump({"type": "tool_result", "tool_use_id": f"toolu_{pick(rng, ALNUM, 24)}", "content": [
        {"type": "text", "text": f"query ok, 1 row from {_table(rng)}\n{snip}"}], "is_error": False})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "mongoexport": mongoexport, "prisma_log": prisma_log, "es_hits": es_hits, "bigquery_rows": bigquery_rows,
    "kafka_rest": kafka_rest, "ge_validation": ge_validation, "airbyte_record": airbyte_record,
    "duckdb_json": duckdb_json, "databricks_statement": databricks_statement, "agent_tool_result": agent_tool_result}


# ---- values: credentials --------------------------------------------------------------------------------------

WORDS = ["Harbor", "Quartz", "maple", "Falcon", "tundra", "Orchid", "copper", "Nimbus", "saffron", "Glacier",
         "pepper", "Vortex", "lantern", "Meadow", "cobalt", "Sierra", "walnut", "Ember"]
SYMBOLS = "!#$%&*+-=?^_~"


def _password(rng: random.Random, i: int) -> str:
    """A password as people and generators make them: words with digits, random characters, or a passphrase."""
    if i % 3 == 0:
        return rng.choice(WORDS) + rng.choice(SYMBOLS) + digits(rng, 4) + rng.choice(WORDS).lower()
    if i % 3 == 1:
        return pick(rng, ALNUM, 6) + rng.choice(SYMBOLS) + pick(rng, ALNUM + "!#%*+-=?^_~", 11)
    return "-".join(rng.choice(WORDS).lower() for _ in range(4)) + digits(rng, 2)


def v_password(rng: random.Random, i: int) -> Value:
    pw = _password(rng, i)
    label = LANGS[LANG_CODES[i % len(LANG_CODES)]][1]
    styles = [
        ("label", f"{label}: {pw}"),
        ("pg_alter_role", f"LOG:  statement: ALTER ROLE svc_loader WITH LOGIN PASSWORD '{pw}';"),
        ("mysql_create_user", f"CREATE USER 'etl_reader'@'%' IDENTIFIED BY '{pw}';"),
        ("bound_positional", f"INSERT INTO db_credentials (host, username, password) VALUES (%s, %s, %s) "
                             f"[parameters: ('db-{rng.randint(1, 9)}.internal', 'etl', '{pw}')]"),
        ("jdbc_binding", f"insert into datasource (name, jdbc_user, jdbc_password) values (?, ?, ?) | binding "
                         f"parameter [3] as [VARCHAR] - [{pw}]"),
        ("redis_auth", f"127.0.0.1:6379> AUTH default {pw}\nOK"),
        ("dbt_profile", f"analytics:\n  target: prod\n  outputs:\n    prod:\n      type: postgres\n      user: "
                        f"dbt_prod\n      password: \"{pw}\"\n      dbname: analytics"),
        ("pgpassword_env", f"PGPASSWORD='{pw}' psql -h warehouse.internal -U analyst -d analytics -c 'select 1'"),
        ("airflow_conn_get", f"conn_id  | warehouse_pg\nconn_type | postgres\nlogin    | etl\npassword | {pw}"),
        ("spark_jdbc_option", f"df = spark.read.format(\"jdbc\").option(\"user\", \"reporting\")"
                              f".option(\"password\", \"{pw}\").load()"),
    ]
    style, snip = styles[i % len(styles)]
    return style, pw, snip, False


def _akid(rng: random.Random, i: int) -> str:
    return ("AKIA" if i % 2 else "ASIA") + pick(rng, B32, 16)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    akid, sk = _akid(rng, i), pick(rng, B64, 40)
    styles = [
        ("credentials_file", f"[default]\naws_access_key_id = {akid}\naws_secret_access_key = {sk}"),
        ("spark_s3a", f"spark.hadoop.fs.s3a.access.key={akid}\nspark.hadoop.fs.s3a.secret.key={sk}"),
        ("redshift_copy", f"COPY events FROM 's3://acme-raw/events/' CREDENTIALS 'aws_access_key_id={akid};"
                          f"aws_secret_access_key={sk}' FORMAT AS JSON 'auto';"),
        ("snowflake_stage", f"CREATE STAGE raw_stage URL='s3://acme-raw/' CREDENTIALS=(AWS_KEY_ID='{akid}' "
                            f"AWS_SECRET_KEY='{sk}');"),
        ("duckdb_secret", f"CREATE SECRET s3_raw (TYPE S3, KEY_ID '{akid}', SECRET '{sk}', REGION 'eu-west-1');"),
        ("sts_response", f"{{\"Credentials\": {{\"AccessKeyId\": \"{akid}\", \"SecretAccessKey\": \"{sk}\", "
                         f"\"SessionToken\": \"IQoJb3JpZ2luX2VjE{pick(rng, B64, 120)}\", \"Expiration\": "
                         f"\"{_ts(rng, 'T')}Z\"}}}}"),
        ("env_pair", f"AWS_ACCESS_KEY_ID={akid} AWS_SECRET_ACCESS_KEY={sk} aws s3 ls s3://acme-exports/"),
    ]
    style, snip = styles[i % len(styles)]
    return style, sk, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    where = ["slack_webhook:", "on_failure_callback url =", "alert_channels.url |", "notify ->", "webhook_url="][i % 5]
    kind = i % 6
    if kind == 0:
        token = pick(rng, ALNUM, 24)
        team, bot = pick(rng, UPPER + string.digits, 10), pick(rng, UPPER + string.digits, 10)
        url = f"https://hooks.slack.com/services/T{team}/B{bot}/{token}"
    elif kind == 1:
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{token}"
    elif kind == 2:
        token = pick(rng, HEX, 32)
        url = f"https://acme.webhook.office.com/webhookb2/{_uuid(rng)}@{_uuid(rng)}/IncomingWebhook/{token}/{_uuid(rng)}"
    elif kind == 3:
        token = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}/"
               f"triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}")
    elif kind == 4:
        token = pick(rng, URLSAFE, 43)
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSyDdI0hCZtE6vySjMm"
               f"-WEfRq3CPzqKqqsHI&token={token}")
    else:
        token = pick(rng, LOWER + string.digits, 26)
        url = f"https://mattermost.acme-data.io/hooks/{token}"
    styles = ["slack", "discord", "teams_legacy", "power_automate", "google_chat", "mattermost"]
    return styles[kind], token, f"{where} {url}", False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + (pick(rng, HEX, 64) if i % 4 == 3 else pick(rng, ALNUM, 32))
    styles = [
        ("endpoint_response", f"{{\"id\": \"we_{pick(rng, ALNUM, 24)}\", \"object\": \"webhook_endpoint\", "
                              f"\"secret\": \"{secret}\", \"status\": \"enabled\"}}"),
        ("env", f"STRIPE_WEBHOOK_SECRET={secret}"),
        ("airbyte_config", f"source-stripe config: account_id=acct_{pick(rng, ALNUM, 16)} webhook_secret={secret}"),
        ("cli_listen", f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is "
                       f"{secret} (^C to quit)"),
    ]
    style, snip = styles[i % len(styles)]
    return style, secret, snip, False


def _uri_password(rng: random.Random, i: int) -> str:
    pw = pick(rng, ALNUM, 8) + rng.choice("-_.~") + pick(rng, ALNUM, 9)
    return pw[:6] + "%21" + pw[6:] if i % 5 == 4 else pw


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = _uri_password(rng, i)
    host = f"db-{rng.randint(1, 20)}.{rng.choice(['internal', 'eu-west-1.rds.amazonaws.com'])}"
    azure_key = base64.b64encode(rng.randbytes(64)).decode()
    styles = [
        ("postgres_uri", f"AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=postgresql+psycopg2://airflow:{pw}@{host}:5432/airflow"),
        ("mysql_uri", f"sqlalchemy.url = mysql+pymysql://loader:{pw}@{host}:3306/shop?charset=utf8mb4"),
        ("mongodb_srv", f"MONGO_URI=mongodb+srv://app_ro:{pw}@cluster0.{pick(rng, LOWER + string.digits, 5)}"
                        ".mongodb.net/events?retryWrites=true&w=majority"),
        ("redis_uri", f"CELERY_BROKER_URL=rediss://default:{pw}@cache-{rng.randint(1, 9)}.internal:6380/0"),
        ("snowflake_uri", f"snowflake://dbt_user:{pw}@acme-xy{rng.randint(10000, 99999)}/ANALYTICS/PUBLIC"
                          "?warehouse=TRANSFORMING&role=TRANSFORMER"),
        ("clickhouse_uri", f"clickhouse://default:{pw}@{host}:8123/default"),
        ("jdbc_postgres", f"jdbc:postgresql://{host}:5432/analytics?user=reporting&password={pw}&ssl=true"),
        ("jdbc_sqlserver", f"jdbc:sqlserver://{host}:1433;databaseName=Sales;user=etl;password={pw};"
                           "encrypt=true"),
        ("odbc", f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:{host},1433;Database=dw;Uid=svc_bi;"
                 f"Pwd={pw};Encrypt=yes;"),
        ("sqlalchemy_error", f"sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server "
                             f"failed (engine url postgresql://analyst:{pw}@{host}/analytics)"),
        ("azure_storage", f"DefaultEndpointsProtocol=https;AccountName=acmelake{rng.randint(10, 99)};AccountKey="
                          f"{azure_key};EndpointSuffix=core.windows.net"),
        ("dbt_env", f"DBT_ENV_SECRET_PG_URL=postgres://dbt:{pw}@{host}:5432/analytics?sslmode=require"),
    ]
    style, snip = styles[i % len(styles)]
    return style, (azure_key if style == "azure_storage" else pw), snip, False


def v_labelled_key(rng: random.Random, i: int) -> Value:
    key = pick(rng, HEX, 32) if i % 2 else pick(rng, ALNUM, 40)
    label = LANGS[LANG_CODES[(i * 7) % len(LANG_CODES)]][4]
    styles = [
        ("localized", f"{label}: {key}"),
        ("segment_write_key", f"Segment write key: {key}"),
        ("amplitude", f"AMPLITUDE_API_KEY = \"{key}\""),
        ("header", f"X-API-Key: {key}"),
        ("fivetran", f"Fivetran api_key={key} (connector {pick(rng, LOWER, 8)}_{pick(rng, LOWER, 6)})"),
        ("metabase", f"Metabase API key: {key}"),
        ("airbyte_yaml", f"credentials:\n  api_key: {key}\n  start_date: 2026-01-01"),
        ("query_param", f"GET https://api.acme-metrics.io/v2/export?api_key={key}&format=csv"),
    ]
    style, snip = styles[i % len(styles)]
    return style, key, snip, False


def _fullwidth(text: str) -> str:
    """ASCII printable characters in their full-width forms (U+FF01-FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def v_disguised(rng: random.Random, i: int) -> Value:
    base = [crc_token(rng, "ghp_"), "xoxb-" + digits(rng, 12) + "-" + digits(rng, 13) + "-" + pick(rng, ALNUM, 24),
            "dapi" + pick(rng, HEX, 32), _password(rng, i)][i % 4]
    kind = i % 5
    if kind == 0:
        cut = len(base) // 2
        secret = base[:cut] + "\u200b" + base[cut:]
        return "zero_width", secret, f"token = {secret}", False
    if kind == 1:
        secret = _fullwidth(base)
        return "fullwidth", secret, f"{LANGS['ja'][1]}：{secret}", False
    if kind == 2:
        secret = "".join(f"%{ord(c):02X}" if j % 2 == 0 else c for j, c in enumerate(base))
        return "percent", secret, f"GET /api/export?format=csv&access_token={secret} HTTP/1.1", False
    if kind == 3:
        secret = "".join(f"\\u{ord(c):04x}" if j % 3 == 0 else c for j, c in enumerate(base))
        return "json_unicode", secret, f"{{\"password\": \"{secret}\"}}", True
    cut = len(base) // 3
    secret = base[:cut] + "\u2060" + base[cut:2 * cut] + "\u200c" + base[2 * cut:]
    return "word_joiner", secret, f"secret: {secret}", False


# ---- values: personal data ------------------------------------------------------------------------------------

FIRST = ["maria", "jonas", "aisha", "lukas", "priya", "olivier", "sofia", "kenji", "fatima", "mateo", "ingrid",
         "tomasz", "elif", "dmitri", "ana", "wei", "noa", "ravi", "chloe", "emeka"]
LAST = ["schneider", "dubois", "khan", "novak", "rossi", "yamamoto", "kowalski", "garcia", "lindqvist", "okafor",
        "petrov", "nguyen", "silva", "haddad", "murphy", "sharma", "weber", "moreau", "costa", "jensen"]
DOMAINS = ["gmail.com", "outlook.com", "yahoo.co.uk", "web.de", "orange.fr", "gmx.net", "icloud.com", "libero.it",
           "rediffmail.com", "proton.me", "acme-logistics.com", "northwind-foods.de", "fabrikam.co.in", "uol.com.br"]


def v_email(rng: random.Random, i: int) -> Value:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = [f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}+billing", f"{last}.{first}{rng.randint(1, 99)}",
             f"{first}{last[:3]}"][i % 5]
    email = f"{local}@{rng.choice(DOMAINS)}"
    label = LANGS[LANG_CODES[i % len(LANG_CODES)]][2]
    styles = [
        ("label", f"{label}: {email}"),
        ("where_clause", f"SELECT * FROM customers WHERE lower(email) = '{email}';"),
        ("row_cells", f"{rng.randint(1, 99999)} | {first.title()} {last.title()} | {email}"),
        ("kafka_key", f"key={email} partition={rng.randint(0, 11)}"),
        ("mongo_field", f"{{ \"email\" : \"{email}\", \"plan\" : \"pro\" }}"),
        ("dq_failure", f"not_null/unique failed: duplicate email {email} (2 rows)"),
    ]
    style, snip = styles[i % len(styles)]
    return style, email, snip, False


US_AREAS = ["212", "415", "312", "617", "206", "305", "512", "303", "404", "718", "646", "213", "503", "919"]
CA_AREAS = ["416", "604", "514", "403", "613", "780", "902", "647", "438", "250"]


def _nxx(rng: random.Random) -> str:
    """A NANP central office code: 2-9 first, not N11, not 555."""
    while True:
        code = str(rng.randint(2, 9)) + digits(rng, 2)
        if code[1:] != "11" and code != "555":
            return code


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    area = rng.choice(CA_AREAS if i % 3 == 2 else US_AREAS)
    nxx, line = _nxx(rng), digits(rng, 4)
    number = [f"({area}) {nxx}-{line}", f"{area}-{nxx}-{line}", f"+1 {area} {nxx} {line}", f"{area}.{nxx}.{line}",
              f"1-{area}-{nxx}-{line}", f"+1{area}{nxx}{line}"][i % 6]
    context = ["phone", "mobile", "cell", "contact number", "téléphone", "tel"][i % 6]
    snip = [f"{context}: {number}", f"{rng.randint(1, 9999)} | {context} | {number}",
            f"UPDATE contacts SET {context.replace(' ', '_')} = '{number}' WHERE id = {rng.randint(1, 9999)};"][i % 3]
    return ["label", "row", "update"][i % 3], number, snip, False


UK_GEO = [("020", 4, 4), ("0161", 3, 4), ("0113", 3, 4), ("0131", 3, 4), ("0117", 3, 4), ("029", 4, 4)]


def v_phone_uk(rng: random.Random, i: int) -> Value:
    if i % 2 == 0:
        mobile = "07" + rng.choice("1234589") + digits(rng, 8)
        number = [f"{mobile[:5]} {mobile[5:]}", f"+44 {mobile[1:5]} {mobile[5:]}", mobile,
                  f"+44 (0){mobile[1:5]} {mobile[5:8]} {mobile[8:]}"][i // 2 % 4]
    else:
        code, a, b = rng.choice(UK_GEO)
        first = rng.choice({"020": "38", "029": "2"}.get(code, "2358"))
        local = first + digits(rng, a + b - 1)
        number = (f"{code} {local[:a]} {local[a:]}" if i % 4 == 1 else
                  f"+44 {code[1:]} {local[:a]} {local[a:]}")
    context = ["mobile", "tel", "phone number", "contact", "daytime phone"][i % 5]
    return "national" if number.startswith("0") else "intl", number, f"{context}: {number}", False


def v_phone_fr(rng: random.Random, i: int) -> Value:
    lead = rng.choice(["6", "7", "1", "2", "3", "4", "5", "9"])
    rest = digits(rng, 8)
    pairs = " ".join(rest[j:j + 2] for j in range(0, 8, 2))
    number = [f"0{lead} {pairs}", f"+33 {lead} {pairs}", f"0{lead}{rest}", f"+33 (0){lead} {pairs}",
              f"0{lead}.{pairs.replace(' ', '.')}"][i % 5]
    context = ["portable", "tél.", "téléphone", "numéro de téléphone", "mobile"][i % 5]
    snip = [f"{context} : {number}", f"{rng.randint(1, 9999)};{context};{number}"][i % 2]
    return "intl" if number.startswith("+") else "national", number, snip, False


DE_GEO = ["030", "089", "040", "069", "0221", "0711", "0211", "0351"]


def v_phone_de(rng: random.Random, i: int) -> Value:
    if i % 2 == 0:
        prefix = rng.choice(["0151", "0160", "0170", "0171", "0176", "0157", "0162", "0172"])
        sub = digits(rng, 7 if prefix in ("0160", "0162", "0170", "0171", "0172") else 8)
        number = [f"{prefix} {sub}", f"+49 {prefix[1:]} {sub}", f"{prefix}-{sub}", f"{prefix}/{sub}"][i // 2 % 4]
    else:
        area = rng.choice(DE_GEO)
        sub = str(rng.randint(2, 9)) + digits(rng, 6 if len(area) == 3 else 5)
        number = [f"{area} {sub}", f"+49 (0){area[1:]} {sub}", f"{area}/{sub}"][i // 2 % 3]
    context = ["Telefon", "Handy", "Mobil", "Tel.", "Rufnummer"][i % 5]
    return "intl" if "+" in number else "national", number, f"{context}: {number}", False


IN_LANDLINE = [("011", 8), ("022", 8), ("080", 8), ("044", 8), ("033", 8), ("040", 8)]


def v_phone_in(rng: random.Random, i: int) -> Value:
    if i % 3 != 2:
        mob = rng.choice("6789") + digits(rng, 9)
        number = [f"+91 {mob[:5]} {mob[5:]}", f"0{mob}", f"+91-{mob}", f"{mob[:5]} {mob[5:]}"][i % 4]
    else:
        code, n = rng.choice(IN_LANDLINE)
        sub = rng.choice("2346") + digits(rng, n - 1)
        number = f"{code}-{sub}" if i % 2 else f"+91 {code[1:]} {sub[:4]} {sub[4:]}"
    context = ["mobile", "phone", "मोबाइल", "फ़ोन नंबर", "contact no.", "संपर्क"][i % 6]
    return "intl" if number.startswith("+") else "national", number, f"{context}: {number}", False


def _ssn(rng: random.Random) -> tuple[str, str, str]:
    """An SSN under the SSA's rules: area 001-899 but 666, group 01-99, serial 0001-9999."""
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = _ssn(rng)
    value = [f"{a}-{g}-{s}", f"{a} {g} {s}", f"{a}{g}{s}"][i % 3]
    styles = [("label", f"SSN: {value}"), ("column", f"ssn | {value}"),
              ("w2_row", f"employee_id={rng.randint(1000, 9999)}, social_security_number={value}, state=CA"),
              ("dq_report", f"PII check: column tax_id holds a Social Security number ({value})"),
              ("where", f"SELECT * FROM payroll.employees WHERE ssn = '{value}';")]
    style, snip = styles[i % len(styles)]
    return style, value, snip, False


CARD_IINS: list[tuple[str, int]] = [("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("2720", 16), ("34", 15),
                                    ("37", 15), ("6011", 16), ("65", 16), ("3530", 16), ("3589", 16), ("36", 14),
                                    ("62", 16)]


def v_card(rng: random.Random, i: int) -> Value:
    iin, length = CARD_IINS[i % len(CARD_IINS)]
    if iin in ("2221", "2720"):
        iin = str(rng.randint(2221, 2720))
    if iin in ("3530", "3589"):
        iin = str(rng.randint(3528, 3589))
    body = iin + digits(rng, length - len(iin) - 1)
    number = body + luhn_digit(body)
    value = [number, group_card(number, " "), group_card(number, "-")][i % 3]
    styles = [("column", f"card_number | {value}"),
              ("payload", f"\"pan\": \"{value}\", \"exp\": \"0{rng.randint(1, 9)}/29\""),
              ("dq_failure", f"expect_column_values_to_not_match_regex failed on orders.notes: 'paid with {value}'"),
              ("label", f"Card: {value}")]
    style, snip = styles[i % len(styles)]
    return style, value, snip, False


IBAN_STRUCTURES = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
                   "NL": "4a10n", "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "SE": "3n16n1n",
                   "PT": "4n4n11n2n", "IE": "4a6n8n", "DK": "4n9n1n", "FI": "3n11n", "NO": "4n6n1n"}


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    account = bban(rng, IBAN_STRUCTURES[country])
    compact = country + iban_check(country, account) + account
    value = compact if i % 2 else group(compact, 4, " ")
    styles = [("label", f"IBAN: {value}"), ("column", f"payout_iban | {value}"),
              ("sepa_row", f"{rng.randint(1, 999)};{rng.choice(LAST).title()};{value};EUR;{rng.randint(10, 9999)},00")]
    style, snip = styles[i % len(styles)]
    return style, value, snip, False


# ---- values: tokens and keys ----------------------------------------------------------------------------------

def _jwt(rng: random.Random, payload: dict[str, object]) -> str:
    """An HS256 JWT (RFC 7519): base64url header and claims, 32 random signature bytes."""
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64url(json.dumps(payload, separators=(",", ":")).encode())
    return f"{head}.{body}.{b64url(rng.randbytes(32))}"


def v_jwt(rng: random.Random, i: int) -> Value:
    iat = rng.randint(1_700_000_000, 1_780_000_000)
    claims: list[dict[str, object]] = [
        {"iss": "supabase", "ref": pick(rng, LOWER, 20), "role": "service_role", "iat": iat, "exp": iat + 315_360_000},
        {"role": "web_anon", "exp": iat + 3600},
        {"sub": _uuid(rng), "https://hasura.io/jwt/claims": {"x-hasura-default-role": "analyst",
                                                             "x-hasura-allowed-roles": ["analyst"]}, "iat": iat},
        {"resource": {"dashboard": rng.randint(1, 400)}, "params": {}, "exp": iat + 600}]
    token = _jwt(rng, claims[i % len(claims)])
    styles = [("env", f"SUPABASE_SERVICE_ROLE_KEY={token}"),
              ("postgrest_header", f"curl -s https://api.acme-data.io/rest/v1/orders -H \"Authorization: Bearer "
                                   f"{token}\""),
              ("apikey_header", f"apikey: {token}"),
              ("embed_url", f"https://bi.acme-data.io/embed/dashboard/{token}#bordered=true&titled=true")]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    kind = i % 6
    if kind == 0:
        value = pick(rng, LOWER + string.digits, 32)
        snip = f"session_key | {value}\nexpire_date | {_ts(rng)}+00"
    elif kind == 1:
        value = _uuid(rng)
        snip = f"Cookie: metabase.SESSION={value}; metabase.DEVICE={_uuid(rng)}"
    elif kind == 2:
        value = f".eJw{pick(rng, URLSAFE, 90)}.{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, 27)}"
        snip = f"Set-Cookie: session={value}; HttpOnly; Path=/; SameSite=Lax"
    elif kind == 3:
        value = pick(rng, HEX, 32)
        snip = f"grafana_session={value}; grafana_session_expiry={rng.randint(1_760_000_000, 1_790_000_000)}"
    elif kind == 4:
        value = f"{rng.randint(1, 300)}|{pick(rng, HEX, 128)}"
        snip = f"Cookie: remember_token={value}"
    else:
        value = f"eyJ{pick(rng, URLSAFE, 60)}.{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, 27)}"
        snip = f"requests.get(airflow_url, cookies={{'session': '{value}'}})"
    style = ["django_session", "metabase", "superset_flask", "grafana", "redash", "airflow_flask"][kind]
    return style, value, snip, False


def _pem(label: str, der_bytes: bytes) -> str:
    body = base64.b64encode(der_bytes).decode()
    return f"-----BEGIN {label}-----\n{group(body, 64, chr(10))}\n-----END {label}-----"


def _private_key(rng: random.Random, kind: int) -> str:
    """A PEM key drawn from `rng` only (no OS randomness): EC P-256 as PKCS#8 or SEC1, Ed25519 as PKCS#8 or
    OpenSSH."""
    none = serialization.NoEncryption()
    if kind in (0, 1):
        key = ec.derive_private_key(rng.getrandbits(255) | 1, ec.SECP256R1())
        fmt = serialization.PrivateFormat.PKCS8 if kind == 0 else serialization.PrivateFormat.TraditionalOpenSSL
        return key.private_bytes(serialization.Encoding.PEM, fmt, none).decode().strip()
    seed = rng.randbytes(32)
    ed = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    if kind == 2:
        return ed.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, none).decode().strip()
    public = ed.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"etl@bastion")
    body = base64.b64encode(blob).decode()
    return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{group(body, 70, chr(10))}\n-----END OPENSSH PRIVATE KEY-----"


def v_private_key(rng: random.Random, i: int) -> Value:
    kind = i % 4
    key = _private_key(rng, kind)
    if i % 5 == 4:
        escaped = json.dumps(key + "\n")[1:-1]
        snip = (f"{{\"type\": \"service_account\", \"private_key_id\": \"{pick(rng, HEX, 40)}\", \"private_key\": "
                f"\"{escaped}\", \"client_email\": \"dbt-runner@acme-analytics.iam.gserviceaccount.com\"}}")
        return "sa_json", escaped, snip, False
    context = ["ssl.keystore.key=", "tunnel_method: SSH_KEY_AUTH\nssh_key: |", "sslkey contents:",
               "private_key_content:"][i % 4]
    return ["pkcs8_ec", "sec1_ec", "pkcs8_ed25519", "openssh_ed25519"][kind], key, f"{context}\n{key}", False


def v_databricks_token(rng: random.Random, i: int) -> Value:
    token = "dapi" + pick(rng, HEX, 32) + ("-2" if i % 4 == 0 else "")
    styles = [("env", f"DATABRICKS_TOKEN={token}"),
              ("databrickscfg", f"[DEFAULT]\nhost = https://adb-{digits(rng, 16)}.{rng.randint(1, 19)}."
                                f"azuredatabricks.net\ntoken = {token}"),
              ("dbt_profile", f"type: databricks\nhttp_path: /sql/1.0/warehouses/{pick(rng, HEX, 16)}\ntoken: {token}"),
              ("sql_connector", f"sql.connect(server_hostname=host, http_path=path, access_token=\"{token}\")"),
              ("bearer", f"Authorization: Bearer {token}")]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def v_github_token(rng: random.Random, i: int) -> Value:
    token = crc_token(rng, "ghp_") if i % 3 else f"github_pat_{pick(rng, ALNUM, 22)}_{pick(rng, ALNUM, 59)}"
    styles = [("dbt_packages", f"packages:\n  - git: \"https://{token}@github.com/acme/dbt-internal-macros.git\"\n"
                               "    revision: v1.4.0"),
              ("env", f"GITHUB_TOKEN={token}"), ("git_sync", f"GIT_SYNC_PASSWORD: {token}"),
              ("header", f"Authorization: token {token}")]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def v_openai_key(rng: random.Random, i: int) -> Value:
    if i % 3 == 0:
        key = f"sk-{pick(rng, ALNUM, 20)}T3BlbkFJ{pick(rng, ALNUM, 20)}"
    else:
        key = f"sk-{'proj' if i % 3 == 1 else 'svcacct'}-{pick(rng, URLSAFE, 74)}T3BlbkFJ{pick(rng, URLSAFE, 74)}"
    styles = [("env", f"OPENAI_API_KEY={key}"), ("vanna_config", f"vn = OpenAI_Chat(config={{'api_key': '{key}', "
                                                                 "'model': 'gpt-4o'}})"),
              ("airflow_variables", f"key            | val\nopenai_api_key | {key}"),
              ("header", f"Authorization: Bearer {key}")]
    style, snip = styles[i % len(styles)]
    return style, key, snip, False


def v_slack_bot_token(rng: random.Random, i: int) -> Value:
    token = f"xoxb-{digits(rng, rng.randint(10, 13))}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    styles = [("airflow_conn", f"slack_api_default | slack | password={token}"), ("env", f"SLACK_BOT_TOKEN={token}"),
              ("ge_action", f"action:\n  class_name: SlackNotificationAction\n  slack_token: {token}\n  slack_channel:"
                            " '#data-alerts'"),
              ("header", f"Authorization: Bearer {token}")]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def v_fernet_key(rng: random.Random, i: int) -> Value:
    key = base64.urlsafe_b64encode(rng.randbytes(32)).decode()
    styles = [("env", f"AIRFLOW__CORE__FERNET_KEY={key}"), ("airflow_cfg", f"[core]\nfernet_key = {key}"),
              ("helm_values", f"fernetKey: {key}\nwebserverSecretKey: {{{{ .Values.secret }}}}"),
              ("cli", f"$ airflow config get-value core fernet_key\n{key}")]
    style, snip = styles[i % len(styles)]
    return style, key, snip, False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    kind = i % 4
    seed = pick(rng, HEX, 40) if kind == 2 else pick(rng, B32, 32 if i % 2 else 16)
    styles = [("otpauth", f"otpauth://totp/Metabase:analyst{rng.randint(1, 99)}?secret={seed}&issuer=Metabase"
                          "&algorithm=SHA1&digits=6&period=30"),
              ("users_column", f"id | username | mfa_secret\n{rng.randint(1, 999)} | ops{rng.randint(1, 99)} | {seed}"),
              ("django_otp", f"COPY public.otp_totp_totpdevice (id, name, confirmed, key, step, digits) FROM stdin;\n"
                             f"{rng.randint(1, 99)}\tdefault\tt\t{seed}\t30\t6"),
              ("keycloak_credential", f"type | secret_data\notp  | {{\"value\":\"{seed}\"}}")]
    style, snip = styles[kind]
    return style, seed, snip, False


def v_es_api_key(rng: random.Random, i: int) -> Value:
    key_id, api_key = pick(rng, URLSAFE, 20), pick(rng, URLSAFE, 22)
    encoded = base64.b64encode(f"{key_id}:{api_key}".encode()).decode()
    styles = [("header", f"Authorization: ApiKey {encoded}", encoded),
              ("create_response", f"{{\"id\": \"{key_id}\", \"name\": \"etl-writer\", \"api_key\": \"{api_key}\", "
                                  f"\"encoded\": \"{encoded}\"}}", api_key),
              ("logstash", f"output {{ elasticsearch {{ api_key => \"{key_id}:{api_key}\" }} }}", api_key),
              ("env", f"ELASTIC_API_KEY={encoded}", encoded)]
    style, snip, secret = styles[i % len(styles)]
    return style, secret, snip, False


def v_kafka_sasl_secret(rng: random.Random, i: int) -> Value:
    key, secret = pick(rng, UPPER + string.digits, 16), pick(rng, B64, 64)
    styles = [("jaas", f"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                       f"username=\"{key}\" password=\"{secret}\";"),
              ("librdkafka", f"sasl.mechanisms=PLAIN\nsasl.username={key}\nsasl.password={secret}"),
              ("confluent_cli", f"+------------+------------------------------------------------------------------+\n"
                                f"| API Key    | {key}{' ' * 50}|\n| API Secret | {secret} |"),
              ("env", f"CONFLUENT_CLOUD_API_KEY={key} CONFLUENT_CLOUD_API_SECRET={secret}")]
    style, snip = styles[i % len(styles)]
    return style, secret, snip, False


def v_auth_header(rng: random.Random, i: int) -> Value:
    if i % 2 == 0:
        cred = base64.b64encode(f"{rng.choice(['default', 'elastic', 'admin'])}:{_password(rng, i)}".encode()).decode()
        snip = [f"curl 'https://ch.acme-data.io:8443/?query=SELECT%201' -H 'Authorization: Basic {cred}'",
                f"{{'Authorization': 'Basic {cred}', 'Content-Type': 'application/json'}}"][i // 2 % 2]
        return "basic", cred, snip, False
    cred = "ya29." + pick(rng, URLSAFE, 150)
    snip = [f"curl -H \"Authorization: Bearer {cred}\" https://bigquery.googleapis.com/bigquery/v2/projects/acme/jobs",
            f"DEBUG google.auth.transport.requests: headers={{'authorization': 'Bearer {cred}'}}"][i // 2 % 2]
    return "bearer_ya29", cred, snip, False


# ---- values: national ids (outside the target) ----------------------------------------------------------------

def _birth(rng: random.Random) -> tuple[int, int, int]:
    return rng.randint(1950, 2005), rng.randint(1, 12), rng.randint(1, 28)


def _fr_nir(rng: random.Random, i: int) -> str:
    year, month, _ = _birth(rng)
    body = f"{rng.randint(1, 2)}{year % 100:02d}{month:02d}{rng.randint(1, 95):02d}{rng.randint(1, 990):03d}" \
           f"{rng.randint(1, 999):03d}"
    key = f"{97 - int(body) % 97:02d}"
    if i % 2:
        return body + key
    return f"{body[0]} {body[1:3]} {body[3:5]} {body[5:7]} {body[7:10]} {body[10:]} {key}"


CF_ODD = dict(zip(string.digits + UPPER, [1, 0, 5, 7, 9, 13, 15, 17, 19, 21] + [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4,
                                                                             18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22,
                                                                             25, 24, 23], strict=True))


def _it_cf(rng: random.Random, _i: int) -> str:
    year, month, day = _birth(rng)
    day += 40 * rng.randint(0, 1)
    body = (pick(rng, "BCDFGLMNPRSTVZ", 3) + pick(rng, "BCDFGLMNPRSTVZ", 2) + rng.choice("AEIO") + f"{year % 100:02d}"
            + "ABCDEHLMPRST"[month - 1] + f"{day:02d}" + rng.choice(["H501", "F205", "L219", "A944", "D612", "F839"]))
    total = sum(CF_ODD[c] if j % 2 == 0 else int(c, 36) - (10 if c.isalpha() else 0) for j, c in enumerate(body))
    return body + chr(ord("A") + total % 26)


def _se_pnr(rng: random.Random, i: int) -> str:
    year, month, day = _birth(rng)
    nine = f"{year % 100:02d}{month:02d}{day:02d}{digits(rng, 3)}"
    full = nine + luhn_digit(nine)
    return f"{full[:6]}-{full[6:]}" if i % 2 else f"{year // 100}{full[:6]}-{full[6:]}"


def _fi_hetu(rng: random.Random, i: int) -> str:
    year, month, day = _birth(rng)
    serial = rng.randint(2, 899)
    check = "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(f"{day:02d}{month:02d}{year % 100:02d}{serial:03d}") % 31]
    sign = ("-" if i % 2 else "Y") if year < 2000 else ("A" if i % 2 else "B")
    return f"{day:02d}{month:02d}{year % 100:02d}{sign}{serial:03d}{check}"


def _no_fnr(rng: random.Random, _i: int) -> str:
    """Norwegian fødselsnummer: DDMMYY, three individual digits, two mod 11 control digits (a 10 is redrawn)."""
    while True:
        year, month, day = _birth(rng)
        individual = rng.randint(0, 499) if year < 2000 else rng.randint(500, 999)
        d = [int(c) for c in f"{day:02d}{month:02d}{year % 100:02d}{individual:03d}"]
        k1 = 11 - sum(w * x for w, x in zip([3, 7, 6, 1, 8, 9, 4, 5, 2], d, strict=True)) % 11
        k1 = 0 if k1 == 11 else k1
        k2 = 11 - sum(w * x for w, x in zip([5, 4, 3, 2, 7, 6, 5, 4, 3, 2], d + [k1], strict=True)) % 11
        k2 = 0 if k2 == 11 else k2
        if k1 < 10 and k2 < 10:
            return "".join(map(str, d)) + f"{k1}{k2}"


def _cn_rid(rng: random.Random, _i: int) -> str:
    year, month, day = _birth(rng)
    body = rng.choice(["110101", "310104", "440305", "510107", "330106", "420111"]) + f"{year}{month:02d}{day:02d}" \
        + digits(rng, 3)
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return body + "10X98765432"[sum(w * int(c) for w, c in zip(weights, body, strict=True)) % 11]


def _br_cpf(rng: random.Random, i: int) -> str:
    while True:
        d = [int(c) for c in digits(rng, 9)]
        if len(set(d)) > 1:
            break
    for n in (10, 11):
        d.append(sum(w * x for w, x in zip(range(n, 1, -1), d, strict=True)) * 10 % 11 % 10)
    s = "".join(map(str, d))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}" if i % 2 else s


IDS: dict[str, tuple[Callable[[random.Random, int], str], list[str]]] = {
    "fr_nir": (_fr_nir, ["N° de sécurité sociale", "NIR", "numéro INSEE"]),
    "it_codice_fiscale": (_it_cf, ["Codice fiscale", "CF", "codice_fiscale"]),
    "se_personnummer": (_se_pnr, ["Personnummer", "personnr", "Pnr"]),
    "fi_hetu": (_fi_hetu, ["Henkilötunnus", "HETU", "hetu"]),
    "no_fodselsnummer": (_no_fnr, ["Fødselsnummer", "fnr", "Fødselsnr."]),
    "cn_resident_id": (_cn_rid, ["身份证号", "居民身份证号码", "id_card_no"]),
    "br_cpf": (_br_cpf, ["CPF", "cpf", "Nº do CPF"]),
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """A generator of `kind`'s ids under its national labels, as a column, a label or a WHERE clause."""
    make, labels = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value, label = make(rng, i), labels[i % len(labels)]
        style, snip = [("label", f"{label}: {value}"), ("column", f"{label} | {value}"),
                       ("where", f"SELECT * FROM customers WHERE national_id = '{value}'; -- {label}")][i % 3]
        return style, value, snip, False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "session_cookie": v_session_cookie, "private_key": v_private_key,
    "databricks_token": v_databricks_token, "github_token": v_github_token, "openai_key": v_openai_key,
    "slack_bot_token": v_slack_bot_token, "fernet_key": v_fernet_key, "totp_seed": v_totp_seed,
    "es_api_key": v_es_api_key, "kafka_sasl_secret": v_kafka_sasl_secret, "auth_header": v_auth_header,
    **{k: national_id(k) for k in IDS}}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists."""
    style, secret, snip, raw_only = value
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

def _luhn_bad(rng: random.Random) -> str:
    body = rng.choice("3456") + digits(rng, 14)
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def _isin(rng: random.Random) -> str:
    """An ISIN (ISO 6166): country, 9 characters, the Luhn digit over the letters-as-numbers expansion."""
    body = rng.choice(["US", "DE", "FR", "GB", "NL"]) + digits(rng, 9)
    return body + luhn_digit("".join(str(int(c, 36)) for c in body))


def _gtin(rng: random.Random) -> str:
    """A GTIN-13 (GS1): 12 digits and the mod 10 check with weights 1, 3."""
    body = rng.choice(["400", "300", "800", "890"]) + digits(rng, 9)
    return body + str(-sum(int(c) * (3 if j % 2 else 1) for j, c in enumerate(body)) % 10)


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "object_id": lambda r: f'{{ "_id" : {{ "$oid" : "{pick(r, HEX, 24)}" }}, "status" : "shipped" }}',
    "uuid_key": lambda r: f"order_uuid | {_uuid(r)}\ncustomer_key | {pick(r, HEX, 32)} (dbt surrogate key)",
    "lsn_txid": lambda r: f"LOG:  logical decoding found consistent point at {r.randint(0, 9):X}/"
                          f"{pick(r, HEX, 8).upper()}; txid_current() = {r.randint(10 ** 6, 10 ** 9)}, "
                          f"xmin {r.randint(10 ** 5, 10 ** 8)}",
    "job_id": lambda r: r.choice([f"Job bquxjob_{pick(r, HEX, 8)}_{pick(r, HEX, 12)} DONE",
                                  f"query_id 01b{pick(r, HEX, 5)}-0{r.randint(100, 999)}-{pick(r, HEX, 4)}-0000-"
                                  f"{pick(r, HEX, 12)}", f"application_{r.randint(10 ** 12, 10 ** 13 - 1)}_"
                                  f"{r.randint(1, 9999):04d} RUNNING", f"run_id=scheduled__2026-0{r.randint(1, 9)}"
                                  "-01T00:00:00+00:00"]),
    "kafka_offset": lambda r: f"topic=billing.events partition={r.randint(0, 47)} "
                              f"offset={r.randint(10 ** 5, 10 ** 10)} lag={r.randint(0, 90000)} "
                              f"CreateTime:{r.randint(1_760_000_000_000, 1_790_000_000_000)}",
    "row_hash": lambda r: f"_airbyte_raw_id={_uuid(r)} row_md5={hashlib.md5(r.randbytes(8)).hexdigest()} "
                          f"sha256={hashlib.sha256(r.randbytes(8)).hexdigest()}",
    "timestamp": lambda r: f"created_at | {_ts(r)}.{r.randint(10 ** 5, 10 ** 6 - 1)}+00\nepoch_ms   | "
                           f"{r.randint(1_700_000_000_000, 1_790_000_000_000)}",
    "amount": lambda r: f"sum(amount_cents) = {r.randint(10 ** 6, 10 ** 11)}; avg = {r.uniform(1, 9999):.4f}; "
                        f"numeric(18,2) total {r.randint(1000, 99999999):,}.{r.randint(0, 99):02d} EUR",
    "coordinates": lambda r: f"POINT({r.uniform(-180, 180):.6f} {r.uniform(-90, 90):.6f}) SRID=4326, h3 "
                             f"{pick(r, HEX, 15)}",
    "column_names": lambda r: r.choice(["password_hash | character varying(255) | not null",
                                        "api_key text NULL, api_secret text NULL, -- encrypted at rest",
                                        "Columns: id, email, phone, ssn_last4, card_token, iban_masked",
                                        "ALTER TABLE users ADD COLUMN totp_secret bytea;",
                                        "csrf_token hidden field; session_key varchar(40) PRIMARY KEY"]),
    "placeholder": lambda r: r.choice(["password: ********", "postgresql://user:****@db.internal/analytics",
                                       "password: \"{{ env_var('DBT_PASSWORD') }}\"",
                                       "AWS_SECRET_ACCESS_KEY=${AWS_SECRET}",
                                       "Email: you@example.com", "api_key: <your-api-key>", "token: REDACTED",
                                       "sasl.password=<CLUSTER_API_SECRET>", "Passwort: [entfernt]"]),
    "masked": lambda r: r.choice([f"card **** **** **** {digits(r, 4)}", f"ssn_last4 = {digits(r, 4)}",
                                  f"IBAN DE** **** **** **** **{digits(r, 2)}", f"j***@{r.choice(DOMAINS)}",
                                  f"+44 7*** ***{digits(r, 3)}", f"dapi{'*' * 28}{pick(r, HEX, 4)}",
                                  f"note | Customer asked about refund for ord... (truncated {r.randint(20, 900)} "
                                  "chars)"]),
    "version": lambda r: r.choice([f"PostgreSQL 16.{r.randint(0, 4)} (Debian 16.{r.randint(0, 4)}-1.pgdg120+1)",
                                   f"dbt-core 1.{r.randint(5, 9)}.{r.randint(0, 9)}, dbt-snowflake "
                                   f"1.{r.randint(5, 9)}.{r.randint(0, 5)}", f"apache-airflow==2.{r.randint(7, 10)}."
                                   f"{r.randint(0, 4)}",
                                   f"Spark {r.randint(3, 4)}.{r.randint(0, 5)}.{r.randint(0, 3)}, "
                                   f"Scala 2.12.{r.randint(10, 18)}",
                                   f"mongod version v7.0.{r.randint(1, 14)}"]),
    "service_number": lambda r: r.choice([f"Customer service: 1-800-{r.randint(200, 999)}-{digits(r, 4)} (toll-free)",
                                          f"Freephone 0800 {digits(r, 3)} {digits(r, 4)}",
                                          f"Service client : 0 800 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)} "
                                          "(appel gratuit)", f"Kundenservice (kostenlos): 0800 {digits(r, 7)}",
                                          f"Toll free helpline 1800-{digits(r, 3)}-{digits(r, 4)}"]),
    "luhn_invalid": lambda r: f"transaction_id | {_luhn_bad(r)}",
    "order_number": lambda r: r.choice([f"order_no ORD-2026-{r.randint(1, 999999):06d}",
                                        f"amazon_order_id {r.randint(100, 999)}-{digits(r, 7)}-{digits(r, 7)}",
                                        f"invoice INV/{r.randint(2024, 2026)}/{r.randint(1, 99999):05d}"]),
    "tracking_number": lambda r: r.choice([f"ups_tracking 1Z{pick(r, UPPER + string.digits, 16)}",
                                           f"usps 9400 {digits(r, 4)} {digits(r, 4)} {digits(r, 4)} {digits(r, 4)} "
                                           f"{digits(r, 2)}", f"fedex {digits(r, 12)}"]),
    "query_stats": lambda r: r.choice([f"({r.randint(2, 99999)} rows)\nTime: {r.uniform(1, 9000):.3f} ms",
                                       f"Query OK, {r.randint(1, 9999)} rows affected ({r.uniform(0, 9):.2f} sec)",
                                       f"Bytes processed: {r.randint(10 ** 6, 10 ** 12)}; slot ms: "
                                       f"{r.randint(1000, 10 ** 7)}"]),
    "doc_example": lambda r: r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                       "export DATABRICKS_TOKEN=<personal-access-token>",
                                       "whsec_... (copy it from the dashboard)"]),
    "isin_gtin": lambda r: f"isin {_isin(r)} | gtin {_gtin(r)} | qty {r.randint(1, 500)}",
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
