"""Values as databases' and ORMs' logs print them (issue 40, the twenty-seventh corpus's password causes): values
bound to an INSERT's placeholders, labelled by their column (SQLAlchemy's echo and its errors' `[parameters: …]`,
Hibernate's `binding parameter` lines), and Redis's AUTH at redis-cli's prompt. Values written for these tests."""

from __future__ import annotations

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


@pytest.mark.parametrize("text", ["spring.datasource.password=gSBxAHbjkbtiaNru",
                                  "jdbc:postgresql://db:5432/app?user=etl&password=gywcnodMFcUdgXutpG&ssl=true"])
def test_a_password_of_random_letters_of_both_cases(text: str) -> None:
    assert len(_values(text)) == 1


@pytest.mark.parametrize("text", ["password=getUserPassword", "password=maxPasswordLength",
                                  "pwd=XMLHttpRequest", "password=SecretManagerServiceClient"])
def test_a_camel_case_name_after_a_password_label_stays(text: str) -> None:
    assert _values(text) == []
