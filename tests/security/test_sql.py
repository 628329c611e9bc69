"""`tracegym sql` reads the store and nothing else (issue 24, finding 2).

Each attack runs through the CLI as a user would type it, against a real store, and must end with exit code 2, a
one-line message, and the file system as it was: no file written, read, attached or downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

SECRET = "not-for-sql-4f1c"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A store with one trace, a secret file and another DuckDB file beside it, and a home of its own (DuckDB
    installs extensions under ~/.duckdb)."""
    from tracegym.store import open_store

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    store = tmp_path / "store.duckdb"
    with open_store(store) as st:
        st.query("INSERT INTO traces (trace_id, format) VALUES ('t1', 'chat')")
    secret = tmp_path / "secret.csv"
    secret.write_text(f"word\n{SECRET}\n", encoding="utf-8")
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE keep AS SELECT range AS i FROM range(3)")
    return {"root": tmp_path, "store": store, "secret": secret, "other": other, "home": home}


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under `root` with its size and modification time."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def test_a_select_still_works(cli, world):
    result = cli("sql", "SELECT trace_id, format FROM traces", "--store", world["store"], "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == [{"trace_id": "t1", "format": "chat"}]


def test_the_store_views_still_work(cli, world):
    result = cli("sql", "SELECT count(*) AS n FROM lineage;", "--store", world["store"], "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == [{"n": 0}]


ATTACKS = {
    "copy_to": "COPY traces TO '{root}/stolen.csv'",
    "export_database": "EXPORT DATABASE '{root}/exported'",
    "attach_and_delete": "ATTACH '{other}' AS other (READ_WRITE)",
    "read_text": "SELECT content FROM read_text('{secret}')",
    "read_csv": "SELECT * FROM read_csv('{secret}')",
    "glob": "SELECT * FROM glob('{root}/*')",
    "install": "INSTALL httpfs",
    "load": "LOAD httpfs",
    "unlock_external_access": "SET enable_external_access = true",
    "two_statements": "ATTACH '{other}' AS other (READ_WRITE); DELETE FROM other.keep",
}


@pytest.mark.parametrize("name", ATTACKS)
def test_an_attack_is_refused_and_touches_nothing(cli, world, name):
    sql = ATTACKS[name].format(**{k: str(v) for k, v in world.items()})
    cli("sql", "SELECT 1", "--store", world["store"])  # the store's own files settle before the snapshot
    before = snapshot(world["root"])
    result = cli("sql", sql, "--store", world["store"])
    assert result.exit_code == 2, result.stdout
    assert "reads the store and nothing else" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 2, result.stderr  # the title, then one line
    assert SECRET not in result.stdout + result.stderr
    assert snapshot(world["root"]) == before
    with duckdb.connect(str(world["other"]), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM keep").fetchone() == (3,)


def test_the_sealed_connection_cannot_be_unlocked(world):
    """The lock itself, not just the CLI's message: every setting, the lock included, stays as it was opened."""
    from tracegym.errors import StoreError
    from tracegym.store import open_store

    with open_store(world["store"], sealed=True) as st:
        for sql in ("SET enable_external_access = true", "RESET lock_configuration",
                    "SET autoinstall_known_extensions = true", "SET allowed_directories = ['/']"):
            with pytest.raises(StoreError, match="locked"):
                st.query(sql)
        assert st.query("SELECT current_setting('enable_external_access') AS on")[0]["on"] is False


@pytest.mark.parametrize("sql", [" ; ", "/* nothing */"])
def test_no_statement_is_a_clear_error(cli, world, sql):
    result = cli("sql", sql, "--store", world["store"])
    assert result.exit_code == 2
    assert "No SQL statement" in result.stderr
