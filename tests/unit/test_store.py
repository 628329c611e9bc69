from tracegym.store import open_store
from tracegym.store.migrations import MIGRATIONS


def test_migrations_are_recorded_and_applied_once(store_path):
    with open_store(store_path) as st:
        names = [r["name"] for r in st.query("SELECT name FROM _migrations ORDER BY name")]
    assert names == sorted(fn.__name__ for fn in MIGRATIONS)
    with open_store(store_path) as st:
        assert st.scalar("SELECT count(*) FROM _migrations") == len(MIGRATIONS)


def test_store_env_var_overrides_default(tmp_path, monkeypatch, cli, traces_dir):
    target = tmp_path / "elsewhere.duckdb"
    monkeypatch.setenv("TRACEGYM_STORE", str(target))
    result = cli("ingest", traces_dir / "tau-bench", "--json")
    assert result.exit_code == 0, result.stderr
    assert target.exists()
    assert not (tmp_path / ".tracegym").exists()


def test_transaction_rolls_back_on_error(store):
    try:
        with store.transaction() as con:
            con.execute("INSERT INTO traces (trace_id) VALUES ('x')")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert store.scalar("SELECT count(*) FROM traces") == 0
