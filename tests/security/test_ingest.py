"""Issue 24, ingest: a hostile trace costs only itself, and what the store says it holds is what it read.

Each test builds real files that attack one weakness (a line or an array item
the parsers or DuckDB cannot take, a file truncated while it is read, a folder
whose links lead elsewhere, stdin, integers beyond 64 bits) and ingests them
into a real store, through the CLI where the CLI is what is attacked.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracegym.ingest import pipeline, reading
from tracegym.ingest.adapters import openai_chat_sql
from tracegym.ingest.adapters.base import FileSink, SourceFile
from tracegym.ingest.adapters.openai_chat import OpenAIChatAdapter
from tracegym.ingest.json_stream import ArrayItems
from tracegym.ingest.pipeline import ingest_file, ingest_paths
from tracegym.ingest.records import RawRecord
from tracegym.store import open_store

BIG = 2**70 + 1  # beyond 64 bits: a double would keep only its first 16 digits
DEEP = "[" * 2000 + "]" * 2000


def conv(trace_id: str, metadata: Any = None, content: str = "hi") -> dict[str, Any]:
    """A plain OpenAI-chat conversation, the shape the SQL path takes."""
    record = {"id": trace_id, "model": "gpt-4o",
              "messages": [{"role": "user", "content": content}, {"role": "assistant", "content": "ok"}]}
    if metadata is not None:
        record["metadata"] = metadata
    return record


def lines(*records: dict[str, Any] | str) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def ingest(cli: Any, store: Path, *args: Any) -> tuple[int, dict[str, Any]]:
    result = cli("ingest", *args, "--store", store, "--json")
    return result.exit_code, json.loads(result.stdout)


def rows(store: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute(sql).fetchall()


def trace_ids(store: Path) -> list[str]:
    return [tid for (tid,) in rows(store, "SELECT trace_id FROM traces ORDER BY trace_id")]


def errors(store: Path) -> list[tuple[str, str, str]]:
    return rows(store, "SELECT locator, error, raw FROM ingest_errors ORDER BY rowid")


# --- finding 3: one hostile line must not cost the rest of a JSONL file on the SQL path ---------------------

BAD_HEAD = '{"id": "bad", "messages": [{"role": "user", "content": "x"}], "metadata": '
HOSTILE_LINES = {
    "nested 2000 deep": BAD_HEAD + '{"a": ' + DEEP + "}}",
    "5000-digit integer": BAD_HEAD + '{"n": ' + "9" * 5000 + "}}",
    "infinite as a double": BAD_HEAD + '{"n": ' + "9" * 400 + ".0}}",
}


@pytest.mark.parametrize("hostile", HOSTILE_LINES.values(), ids=HOSTILE_LINES.keys())
def test_one_hostile_line_costs_only_itself_on_the_sql_path(cli: Any, store_path: Path, tmp_path: Path,
                                                             hostile: str) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(lines(conv("before"), hostile, conv("after")))
    code, summary = ingest(cli, store_path, path)

    assert code == 0 and summary["traces"] == 2 and summary["errors"] == 1
    assert trace_ids(store_path) == ["after", "before"]
    ((locator, _, raw),) = errors(store_path)
    assert locator == "line 2" and raw == hostile + "\n"


@pytest.fixture
def small_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every memory bound of ingest divided by 16, so that a 40 MB line plays a 640 MB one.

    The store's cap while ingesting becomes 32 MB, the scratch database's 64 MB, the
    largest record 8 MB and the longest line the SQL path takes 4 MB.
    """
    monkeypatch.setattr(pipeline, "INGEST_MEMORY_LIMIT", "32MB")
    monkeypatch.setattr(openai_chat_sql, "SCRATCH_MEMORY", "64MB")
    monkeypatch.setattr(openai_chat_sql, "CHUNK_BYTES", 4 << 20)
    monkeypatch.setattr(openai_chat_sql, "SQL_LINE_BYTES", 4 << 20, raising=False)
    monkeypatch.setattr(reading, "MAX_RECORD_BYTES", 8 << 20, raising=False)


@pytest.mark.usefixtures("small_machine")
def test_a_line_larger_than_the_memory_cap_costs_only_itself(cli: Any, store_path: Path, tmp_path: Path) -> None:
    huge = json.dumps(conv("huge", content="x" * (40 << 20)))
    path = tmp_path / "chat.jsonl"
    path.write_text(lines(conv("before"), huge, conv("after")))
    code, summary = ingest(cli, store_path, path)

    assert code == 0 and summary["traces"] == 2 and summary["errors"] == 1
    assert trace_ids(store_path) == ["after", "before"]
    ((locator, error, raw),) = errors(store_path)
    assert locator == "line 2" and "too large" in error and str(len(huge) + 1) in error
    assert raw.startswith(huge[: 1 << 20]) and len(raw) < 2 << 20  # its head, not the whole line


@pytest.mark.usefixtures("small_machine")
def test_a_value_larger_than_the_memory_cap_costs_only_its_trace_in_a_whole_document(
        cli: Any, store_path: Path, tmp_path: Path, fixtures_dir: Path) -> None:
    results = json.loads((fixtures_dir / "tau2-bench" / "results.json").read_text())
    results["simulations"][1]["messages"][1]["content"] = "x" * (40 << 20)  # one run of three, in one document
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    code, summary = ingest(cli, store_path, path)

    assert code == 0 and summary["traces"] == 2 and summary["errors"] == 1
    ((_, error, _),) = errors(store_path)
    assert "messages[1].content" in error and "more than the 8 MB" in error


def test_a_line_the_sql_path_has_no_memory_for_takes_the_record_path(cli: Any, store_path: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_chat_sql, "SCRATCH_MEMORY", "16MB")  # a 6 MB line needs more there
    path = tmp_path / "chat.jsonl"
    path.write_text(lines(conv("before"), conv("large", content="x" * (6 << 20)), conv("after")))
    code, summary = ingest(cli, store_path, path)

    assert code == 0 and summary["traces"] == 3 and summary["errors"] == 0
    assert rows(store_path, "SELECT trace_id, length(content) FROM messages WHERE idx = 0 ORDER BY 1") == [
        ("after", 2), ("before", 2), ("large", 6 << 20)]


# --- finding 4: a file that changes while it is read is not recorded as ingested ----------------------------


def _truncating(adapter: type) -> type:
    """The adapter, but the file loses its last line just as it starts reading (as a writer would do it)."""

    class Truncating(adapter):
        def bulk_load(self, con: Any, src: SourceFile, sink: FileSink) -> bool:
            _drop_last_line(src.path)
            return super().bulk_load(con, src, sink)

    return Truncating


def _drop_last_line(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])


class _RecordPathChat(OpenAIChatAdapter):
    """OpenAI-chat read record by record (as the JSON-document path does), not through SQL."""

    def bulk_load(self, con: Any, src: SourceFile, sink: FileSink) -> bool:
        return False


@pytest.mark.parametrize("adapter", [OpenAIChatAdapter, _RecordPathChat], ids=["sql-path", "record-path"])
def test_a_file_truncated_while_ingested_is_not_recorded_as_ingested(store_path: Path, tmp_path: Path,
                                                                     adapter: type) -> None:
    path = tmp_path / "chat.jsonl"
    complete = lines(*(conv(f"t{i}") for i in range(5)))
    path.write_text(complete)
    with open_store(store_path) as store:
        result = ingest_file(store, path, _truncating(adapter)(), {})
        assert (result.status, result.traces) == ("failed", 0)
        assert store.scalar("SELECT count(*) FROM traces") == 0
        assert store.scalar("SELECT count(*) FROM sources") == 0
        error = store.scalar("SELECT error FROM ingest_errors")
        assert "changed while it was being ingested" in error

        path.write_text(complete)  # the writer is done: the complete file loads in full
        (again,) = ingest_paths(store, [str(path)]).files
        assert (again.status, again.traces) == ("loaded", 5)


# --- finding 5: JSON documents are read item by item -----------------------------------------------------------


def test_an_array_keeps_every_item_after_a_deeply_nested_one(cli: Any, store_path: Path, tmp_path: Path) -> None:
    deep = '{"id": "deep", "messages": [{"role": "user", "content": "x"}], "metadata": {"a": ' + DEEP + "}}"
    items = [json.dumps(conv("first")), deep, json.dumps(conv("second")), json.dumps(conv("third"))]
    path = tmp_path / "chats.json"
    path.write_text("[" + ", ".join(items) + "]")
    code, summary = ingest(cli, store_path, path)

    assert code == 0 and summary["traces"] == 3 and summary["errors"] == 1
    assert trace_ids(store_path) == ["first", "second", "third"]
    ((locator, error, raw),) = errors(store_path)
    assert locator.startswith("$[1]") and "depth" in error and raw == deep


def test_a_deeply_nested_first_item_neither_crashes_nor_hides_the_format(cli: Any, store_path: Path,
                                                                         tmp_path: Path) -> None:
    deep = '{"id": "deep", "messages": [{"role": "user", "content": "x"}], "metadata": {"a": ' + DEEP + "}}"
    path = tmp_path / "chats.json"
    path.write_text("[" + ", ".join([deep, json.dumps(conv("second"))]) + "]")
    code, summary = ingest(cli, store_path, path)

    assert code == 0 and summary["by_format"]["openai-chat"]["traces"] == 1
    assert trace_ids(store_path) == ["second"] and errors(store_path)[0][0].startswith("$[0]")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet='"\\[]{},: \n\té\u2028ab'),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='"\\[]{}, ab'), inner, max_size=3),
    max_leaves=8), max_size=5), block=st.integers(1, 64), ascii_only=st.booleans(), indent=st.sampled_from([None, 1]))
def test_array_items_are_split_exactly_at_any_block_size(items: list[Any], block: int, ascii_only: bool,
                                                         indent: int | None) -> None:
    """Quotes, escapes and brackets inside strings never split an item, wherever a block boundary falls."""
    data = json.dumps(items, ensure_ascii=ascii_only, indent=indent).encode()
    f = io.BytesIO(data)
    f.seek(1)
    split = ArrayItems(f, 1 << 20, 1 << 10, block)
    found = list(split)
    assert [json.loads(item.data) for item in found] == items
    assert all(data[item.start:item.start + item.size] == item.data for item in found)
    assert split.ending.kind == "closed"


def _read_offset(path: Path) -> int | None:
    """How far this process has read `path` through a file it holds open, or None if it holds none."""
    for fd in Path("/proc/self/fd").iterdir():
        try:
            if Path(os.readlink(fd)) == path:
                return int((Path("/proc/self/fdinfo") / fd.name).read_text().split()[1])
        except OSError:
            continue
    return None


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="needs Linux /proc to see how far a file was read")
def test_a_json_array_is_streamed_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "chats.json"
    items = [json.dumps(conv(f"t{i}", content="y" * 10_000)) for i in range(2000)]  # about 20 MB
    path.write_text("[" + ", ".join(items) + "]")
    records = reading.iter_json_document(path)
    first = next(records)

    assert isinstance(first, RawRecord) and first.value["id"] == "t0"
    offset = _read_offset(path)
    assert offset is not None and offset <= 8 << 20 < path.stat().st_size
    assert sum(1 for r in records if isinstance(r, RawRecord)) == 1999


# --- finding 10: stdin, links out of a folder, integers beyond 64 bits ----------------------------------------


def test_ingesting_stdin_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    cmd = [sys.executable, "-m", "tracegym.cli", "ingest", "-", "--store", str(tmp_path / "store.duckdb"), "--json"]
    done = subprocess.run(cmd, input=lines(conv("piped")), capture_output=True, text=True, env=env, timeout=120)

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["traces"] == 1
    assert list(tmp.iterdir()) == []


@pytest.fixture
def linked_folder(tmp_path: Path) -> Path:
    """traces/ holds a trace file, a link to another file inside it, and links to a file and a folder outside."""
    outside = tmp_path / "elsewhere"
    (outside / "more").mkdir(parents=True)
    (outside / "secret.jsonl").write_text(lines(conv("outside-file")))
    (outside / "more" / "chats.jsonl").write_text(lines(conv("outside-folder")))
    (outside / "passwd").write_text("root:x:0:0:the secret:/root:/bin/bash\n")
    folder = tmp_path / "traces"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "chats.jsonl").write_text(lines(conv("inside")))
    (folder / "again.jsonl").symlink_to(Path("sub") / "chats.jsonl")
    (folder / "stolen.jsonl").symlink_to(outside / "secret.jsonl")
    (folder / "passwd").symlink_to(outside / "passwd")
    (folder / "folder").symlink_to(outside / "more")
    return folder


def test_links_out_of_a_folder_are_skipped_and_reported(cli: Any, store_path: Path, linked_folder: Path) -> None:
    code, summary = ingest(cli, store_path, linked_folder)

    assert code == 0 and trace_ids(store_path) == ["inside"]
    assert not any("secret" in raw for *_, raw in errors(store_path))
    assert sorted(link.split(" -> ")[0] for link in summary["links_skipped"]) == [
        str(linked_folder / name) for name in ("folder", "passwd", "stolen.jsonl")]
    human = cli("ingest", linked_folder, "--store", store_path.with_name("other.duckdb"))
    assert "Skipped 3 symbolic links" in human.stderr and "--follow-symlinks" in human.stderr


def test_follow_symlinks_reads_links_out_of_a_folder(cli: Any, store_path: Path, linked_folder: Path) -> None:
    code, summary = ingest(cli, store_path, linked_folder, "--follow-symlinks")

    assert code == 0 and summary["links_skipped"] == []
    assert trace_ids(store_path) == ["inside", "outside-file", "outside-folder"]


@pytest.mark.parametrize("number", [BIG, -BIG, int("7" * 400)], ids=["71 bits", "-71 bits", "400 digits"])
def test_integers_beyond_64_bits_are_stored_exactly(cli: Any, store_path: Path, tmp_path: Path, number: int) -> None:
    # The same metadata through each path that writes it: the SQL path, the record path for JSONL (a top-level
    # "user" sends a line there), and JSON documents.
    meta = {"n": number, "session_id": "s"}
    files = {"sql.jsonl": lines(conv("sql", meta)), "records.jsonl": lines({**conv("records", meta), "user": "u"}),
             "document.json": json.dumps([conv("document", meta)])}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, summary = ingest(cli, store_path, *(tmp_path / name for name in files))

    assert code == 0 and summary["errors"] == 0
    stored = rows(store_path, "SELECT trace_id, metadata->>'$.n', metadata::VARCHAR FROM traces ORDER BY trace_id")
    assert [(tid, n) for tid, n, _ in stored] == [(tid, str(number)) for tid in ("document", "records", "sql")]
    assert all(json.loads(text)["n"] == number for *_, text in stored)


def test_an_integer_too_long_for_any_reader_costs_only_its_record(cli: Any, store_path: Path,
                                                                  tmp_path: Path) -> None:
    path = tmp_path / "chats.json"
    path.write_text("[" + ", ".join([json.dumps(conv("ok")), HOSTILE_LINES["5000-digit integer"]]) + "]")
    code, summary = ingest(cli, store_path, path)

    assert code == 0 and trace_ids(store_path) == ["ok"]
    ((locator, error, _),) = errors(store_path)
    assert locator.startswith("$[1]") and "5000 digits" in error

