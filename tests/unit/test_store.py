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


def test_a_signal_in_mid_query_is_recognised_as_an_interrupt() -> None:
    """SIGTERM, handled as `tracegym train` handles it (raise KeyboardInterrupt), while DuckDB runs a query of a few
    seconds: the query ends with DuckDB's RuntimeError (at once, or, in some runs here, only when the query is
    done), which `is_interrupt` must tell apart from other RuntimeErrors."""
    import os
    import signal
    import threading

    import duckdb

    from tracegym.errors import is_interrupt

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGTERM))
    caught: BaseException | None = None
    try:
        timer.start()
        try:
            duckdb.connect().execute("SELECT sum(range) FROM range(3000000000)").fetchall()  # ~4 s here
        except BaseException as e:  # noqa: B036 (the point is which exception this is)
            caught = e
    finally:
        timer.join()
        signal.signal(signal.SIGTERM, previous)
    assert caught is not None and is_interrupt(caught), repr(caught)
    assert is_interrupt(KeyboardInterrupt()) and is_interrupt(RuntimeError("Query interrupted"))
    assert not is_interrupt(RuntimeError("Query failed")) and not is_interrupt(ValueError("Query interrupted"))
