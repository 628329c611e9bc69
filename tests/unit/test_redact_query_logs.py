"""Values as databases' and ORMs' logs print them (issue 40, the twenty-seventh corpus's causes): values bound to
an INSERT's placeholders, labelled by their column (SQLAlchemy's echo and its errors' `[parameters: …]`,
Hibernate's `binding parameter` lines), Redis's AUTH at redis-cli's prompt, a pg_dump COPY block's rows, a
credential table's wrapped secret, Elasticsearch's API keys. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("text", [
    "INFO sqlalchemy.engine.Engine INSERT INTO accounts (host, login, password) VALUES (%s, %s, %s)\n"
    "INFO sqlalchemy.engine.Engine [generated in 0.00011s] ('db-3.internal', 'etl', 'heron-basalt-plum-violet27')",
    "sqlalchemy.exc.IntegrityError: INSERT INTO accounts (host, login, password) VALUES (?, ?, ?) "
    "[parameters: ('db-3.internal', 'etl', 'heron-basalt-plum-violet27')]",
    "insert into accounts (host, login, password) values (?, ?, ?)\n"
    "TRACE BasicBinder - binding parameter [3] as [VARCHAR] - [heron-basalt-plum-violet27]",
    "insert into accounts (host, login, password) values ($1, $2, $3)\n"
    "binding parameter (3:VARCHAR) <- [heron-basalt-plum-violet27]",
])
def test_a_value_bound_to_a_password_column(text: str) -> None:
    assert _values(text) == ["heron-basalt-plum-violet27"]


def test_values_bound_to_other_columns_stay() -> None:
    text = ("INSERT INTO orders (sku, qty, note) VALUES (?, ?, ?) "
            "[parameters: ('A-1138', 2, 'leave at the reception desk')]")
    assert _values(text) == []


@pytest.mark.parametrize("text", ["127.0.0.1:6379> AUTH default heron-basalt-plum-violet27\nOK",
                                  "cache.internal:6380[2]> auth heron-basalt-plum-violet27"])
def test_redis_auth_at_the_prompt(text: str) -> None:
    assert _values(text) == ["heron-basalt-plum-violet27"]
    assert _values("127.0.0.1:6379> AUTH\n(error) ERR wrong number of arguments for 'auth' command") == []


@pytest.mark.parametrize(("text", "value"), [
    ("spring.datasource.password=gSBxAHbjkbtiaNru", "gSBxAHbjkbtiaNru"),
    ("jdbc:postgresql://db:5432/app?user=etl&password=gywcnodMFcUdgXutpG&ssl=true", "gywcnodMFcUdgXutpG")])
def test_a_password_of_random_letters_of_both_cases(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["password=getUserPassword", "password=maxPasswordLength",
                                  "pwd=XMLHttpRequest", "password=SecretManagerServiceClient"])
def test_a_camel_case_name_after_a_password_label_stays(text: str) -> None:
    assert _values(text) == []


_COPY = ("COPY public.otp_totp_totpdevice (id, user_id, name, confirmed, key, step, digits) FROM stdin;\n"
         "3\t41\tphone\tt\t9c4e1a77d05b3f28e6a9c0d412b7f5e83a6d90c1\t30\t6\n"
         "4\t57\tdefault\tf\t\\N\t30\t6\n"
         "5\t62\ttablet\tt\te20b6f9d3c8a4715b0f2d6e9a3c71845d2f6b0a9\t30\t6\n\\.\n")


def test_the_rows_of_a_pg_dump_copy_block_by_their_columns() -> None:
    found = ["9c4e1a77d05b3f28e6a9c0d412b7f5e83a6d90c1", "e20b6f9d3c8a4715b0f2d6e9a3c71845d2f6b0a9"]
    assert _values(_COPY) == found
    assert _values(json.dumps({"task": "dump", "stdout": _COPY})) == found
    assert _values("INFO - " + _COPY.replace("\\.\n", "[2026-04-13] {taskinstance.py:1206} INFO - done\n")) == found


def test_copy_rows_of_other_columns_stay() -> None:
    text = ("COPY public.orders (id, sku, note) FROM stdin;\n"
            "7\tA-1138\t4f0c2a9e8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e\n\\.\n")
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    "type     | secret_data\n---------+------------------------------------------------------\n"
    'otp      | {"value":"KQ4TGNZVMFWXI3DPNZSXE2LTOVZGK5DB"}\n',
    '{"type": "otp", "secret_data": {"value": "KQ4TGNZVMFWXI3DPNZSXE2LTOVZGK5DB", "period": 30}}',
    'secret_data = "KQ4TGNZVMFWXI3DPNZSXE2LTOVZGK5DB"'])
def test_a_secret_a_store_wraps_under_secret_data(text: str) -> None:
    assert _values(text) == ["KQ4TGNZVMFWXI3DPNZSXE2LTOVZGK5DB"]


@pytest.mark.parametrize(("text", "value"), [
    ('output { elasticsearch { hosts => ["https://es:9200"] '
     'api_key => "TiNAGG4BaaMdaH1tRfuU:KnR6yE41RrSowb0kQ0HWoA" } }',
     "TiNAGG4BaaMdaH1tRfuU:KnR6yE41RrSowb0kQ0HWoA"),
    ('{"id": "VuaCfGcBCdbkQm-e5aOx", "name": "ingest", "api_key": "ui2lpAgRQ-SjUboVGGaRBQ"}',
     "ui2lpAgRQ-SjUboVGGaRBQ"),
    ('{"id": "VuaCfGcBCdbkQm-e5aOx", "name": "ingest", "api_key": "RaCZPMxGTFNuOTdCXMKscj"}',
     "RaCZPMxGTFNuOTdCXMKscj")])
def test_elasticsearch_api_keys_with_their_id_or_letters_alone(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_a_sanctum_token_in_a_cookie_with_its_id() -> None:
    token = "161|Xq3bV9kLm2Pz7RtY8wNc4FhJ6sDg1AeK5uTo0iWr"
    assert _values(f"Cookie: laravel_session=; remember_token={token}; theme=dark") == [token]
