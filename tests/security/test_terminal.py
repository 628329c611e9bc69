"""Issue 24, finding 7: trace content reaches the terminal as text, never as live control sequences or markup.

A real OpenAI-chat trace (tests/fixtures) is rewritten to carry what a hostile production user or tool could put
in it: a window-title escape in its id and model, a clipboard write (OSC 52), a hyperlink (OSC 8), a screen
clear, a C1 CSI, a bidi override and rich markup. Every command that shows it must print those as visible text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import on_a_terminal
from tracegym.output import err, out

TRACE_ID = "conv-weather-1\x1b]0;pwned\x07"
MODEL = "gpt-4o\x9b2J"
USER = ("What's the weather in Paris?\x1b]52;c;cm0gLXJmIH4=\x07\n[link=https://evil.example]click[/link] [/]\n"
        "\x1b[2J\x1bc \u202eexe.txt\u202c")
TOOL_ERROR = "Error: city \x1b]8;;https://evil.example\x07Atlantis\x1b]8;;\x07 not found\n[bold red]FAKE[/]"
ARGUMENTS = '{"city": "Atlantis\\u001b[8m"}'

# What a terminal acts on: C0 controls but tab and newline, DEL, C1, and the bidi controls.
LIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
EVALS = "version: 1\nevals:\n  - name: recorded\n    kind: label\n    score: reward\n    applies_to: {formats: [%s]}\n"


@pytest.fixture
def hostile_store(cli, fixtures_dir: Path, tmp_path: Path) -> Path:
    """The hostile trace ingested and mined: one tool-error cluster."""
    record = json.loads((fixtures_dir / "openai-chat" / "conversations.jsonl").read_text().splitlines()[0])
    record.update(id=TRACE_ID, model=MODEL)
    record["messages"][1]["content"] = USER
    record["messages"][2]["tool_calls"][1]["function"]["arguments"] = ARGUMENTS
    record["messages"][4]["content"] = TOOL_ERROR
    traces = tmp_path / "hostile.jsonl"
    traces.write_text(json.dumps(record) + "\n")
    store = tmp_path / "store.duckdb"
    assert cli("ingest", traces, "--store", store).exit_code == 0
    assert cli("mine", "failures", "--store", store, "--json").exit_code == 0
    return store


def _cluster(store: Path) -> str:
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        return st.scalar("SELECT cluster_id FROM clusters")


def _shown(cli, *args: str | Path) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    assert not LIVE.search(result.output), (args, result.output)
    return result.output


def test_every_view_of_a_trace_shows_its_control_characters_as_text(cli, hostile_store):
    cluster = _cluster(hostile_store)
    store = ("--store", hostile_store)
    shown = _shown(cli, "traces", "show", TRACE_ID, *store)
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in shown and "\\u202eexe.txt" in shown and "gpt-4o\\x9b2J" in shown
    # Rich markup in the trace is text: no forged link, no style, no closing tag eaten.
    assert "[link=https://evil.example]click[/link] [/]" in shown and "[bold red]FAKE[/]" in shown
    assert "[bold red]FAKE[/]" in _shown(cli, "failures", "show", cluster, *store)
    for args in (("traces", "list"), ("failures", "list"), ("mine", "failures"), ("sql", "SELECT * FROM messages"),
                 ("sql", "SELECT * FROM tool_calls")):
        _shown(cli, *args, *store)


def test_task_views_show_trace_text_as_text(cli, hostile_store, tmp_path):
    evals = tmp_path / "evals.yaml"
    evals.write_text(EVALS % "openai-chat")
    store = ("--store", hostile_store)
    # Ungated: the label eval pays the recorded judgement whatever the reply, which the gates reject.
    _shown(cli, "tasks", "generate", "--allow-unredacted", "--no-gates", "--evals", evals, "--out",
           tmp_path / "hostile", "--top", "1", *store)
    task = json.loads(_shown(cli, "tasks", "list", "hostile", "--json", *store))[0]["task_id"]
    # YAML escapes the C0 controls of the spec it shows; the bidi override it leaves as it is is escaped here.
    assert "\\u202eexe.txt" in _shown(cli, "tasks", "show", task, *store)
    for args in (("tasks", "list", "hostile"), ("lineage", _cluster(hostile_store))):
        _shown(cli, *args, *store)


def test_an_error_that_quotes_a_trace_id_shows_it_as_text(cli, hostile_store, tmp_path):
    evals = tmp_path / "other-evals.yaml"
    evals.write_text(EVALS % "tau-bench")
    result = cli("tasks", "generate", "--allow-unredacted", "--evals", evals, "--out", tmp_path / "none", "--top", "1",
                 "--store", hostile_store)
    assert result.exit_code == 2 and "applies to trace conv-weather-1\\x1b]0;pwned\\x07" in result.stderr
    assert not LIVE.search(result.output)


def test_json_output_keeps_the_data_and_no_raw_control_character(cli, hostile_store):
    result = cli("traces", "show", TRACE_ID, "--store", hostile_store, "--json")
    assert result.exit_code == 0 and not LIVE.search(result.stdout)
    trace = json.loads(result.stdout)
    assert (trace["trace_id"], trace["model"]) == (TRACE_ID, MODEL)
    assert [trace["messages"][i]["content"] for i in (1, 4)] == [USER, TOOL_ERROR]


def test_the_consoles_escape_control_characters_that_a_caller_passes_raw():
    for console in (out, err):
        with console.capture() as captured:
            console.print(f"plain {USER}", markup=False)
        assert not LIVE.search(captured.get()) and "\\x1b]52;c;" in captured.get()


def test_on_a_terminal_only_rich_styles_are_live(hostile_store):
    for args in (("traces", "show", TRACE_ID), ("traces", "list"), ("failures", "show", _cluster(hostile_store))):
        shown = on_a_terminal(*args, "--store", hostile_store)
        assert "\x1b[1m" in shown  # bold: rich saw a terminal
        # Rich's own output is SGR styling (ESC [ ... m) and CRLF line ends; anything else live came from the trace.
        rest = re.sub(r"\x1b\[[0-9;]*m", "", shown).replace("\r\n", "\n")
        assert not LIVE.search(rest), (args, [m.group() for m in LIVE.finditer(rest)][:5])
        if args[:2] == ("traces", "show"):
            assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in rest and "[bold red]FAKE[/]" in rest
