"""The model card names the base model by a name that means the same anywhere, never a path relative to a folder
the reader cannot know; trace text on it renders as text, never as a tag or a link."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tracegym.export.modelcard import CardFacts, base_model_identity, render_card
from tracegym.models.load import model_identity


def test_a_run_records_its_base_model_as_a_built_in_name_or_an_absolute_folder(tmp_path, monkeypatch):
    (tmp_path / "models" / "tiny").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "models")
    assert model_identity("../models/tiny") == str(tmp_path / "models" / "tiny")
    assert model_identity("SmolLM2-135M") == "SmolLM2-135M"
    assert model_identity("no/such/folder") == "no/such/folder"


@pytest.mark.parametrize(("ref", "given_run_dir", "run_dir", "expected"), [
    ("smollm2-135m", "runs/a", "/home/u/proj/runs/a", "smollm2-135m"),
    ("/opt/models/tiny", "runs/a", "/home/u/proj/runs/a", "/opt/models/tiny"),
    # recorded before base models were stored absolute: the folder the run started in, from its run folder
    ("../models/tiny", "runs/a", "/home/u/proj/runs/a", "/home/u/models/tiny"),
    ("tiny", "./runs/a", "/home/u/proj/runs/a", "/home/u/proj/tiny"),
    # no way back to that folder: the model folder's name alone
    ("../models/tiny", "../runs/a", "/home/u/runs/a", "tiny (a local model folder)"),
    ("../models/tiny/", "/abs/runs/a", "/abs/runs/a", "tiny (a local model folder)"),
    (None, None, None, None),
])
def test_a_recorded_base_model_reads_the_same_from_anywhere(ref, given_run_dir, run_dir, expected):
    assert base_model_identity(ref, given_run_dir, run_dir) == expected


def test_the_card_shows_no_relative_path_and_the_hub_id_of_a_built_in_model():
    legacy = CardFacts(name="served", checkpoint="/abs/run/checkpoints/step-000004", checkpoint_id="c" * 64,
                       base_model=base_model_identity("../tiny-model", "../run", "/abs/run"))
    card = render_card(legacy)
    assert "- Base model: tiny-model \\(a local model folder\\)" in card and "../" not in card
    built_in = render_card(CardFacts(name="served", checkpoint=str(Path("/abs/c")), checkpoint_id="c" * 64,
                                     base_model="smollm2-135m"))
    assert "base_model: HuggingFaceTB/SmolLM2-135M-Instruct" in built_in


HOSTILE = ["<img src=x onerror=alert(1)>", "<details open><summary>click</summary>", "[docs](https://evil.example/x)",
           "![pixel](https://evil.example/p.png)", "`code` and ``more``", "<https://evil.example/auto>",
           "see https://evil.example/bare or www.evil.example", "mail attacker@evil.example", "a | b **bold** _em_",
           "&lt;script&gt; \x1b]8;;https://evil.example\x07"]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_trace_text_on_the_card_renders_as_text_never_as_a_tag_or_a_link():
    clusters = [{"cluster_id": value, "rank": i, "detector": value, "signature": value, "train_tasks": 1,
                 "heldout_tasks": 1, "source_traces": 1, "rollouts_sampled": 2, "rollouts_trained_on": 2}
                for i, value in enumerate(HOSTILE)]
    evaluation = {"eval_id": HOSTILE[0], "task_set_id": HOSTILE[2], "split": HOSTILE[1], "tasks": 2, "samples": 4,
                  "reward": 0.5, "base_reward": 0.25, "pass_rate": 0.5, "base_pass_rate": 0.0, "base": HOSTILE[3]}
    facts = CardFacts(name=HOSTILE[4], checkpoint=HOSTILE[5], checkpoint_id=HOSTILE[6], run_id=HOSTILE[7], step=3,
                      base_model=HOSTILE[8], task_set_id=HOSTILE[2], run={"status": HOSTILE[0], "started_at": "x"},
                      clusters=clusters, evaluations=[evaluation],
                      cluster_evals=[{**evaluation, "cluster_id": value} for value in HOSTILE], store=HOSTILE[9],
                      gguf=HOSTILE[1])
    body = render_card(facts).split("\n---\n", 1)[1]

    renderer = MarkdownIt("gfm-like")  # GFM tables, strikethrough and bare-URL linking (linkify)
    assert renderer.options["linkify"]
    parsed = _Tags()
    parsed.feed(renderer.render(body))
    allowed = {"h1", "h2", "p", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "code"}
    assert parsed.tags <= allowed, parsed.tags
    assert "<" not in body.replace("&lt;", "")  # no raw HTML at all in the Markdown
    # Every hostile value is on the rendered page as the text it was (control characters as visible escapes).
    shown = "".join(parsed.text)  # entities decoded by the parser, as a browser shows them
    for value in HOSTILE[:-1]:
        assert value in shown, value
    assert "&lt;script&gt; \\x1b]8;;https://evil.example\\x07" in shown
    # The rendered cells line up with the header: no value split a table row.
    table = next(line for line in body.splitlines() if line.startswith("| cluster |"))
    rows = [line for line in body.splitlines() if line.startswith("| ") and line.count(" | ") == table.count(" | ")]
    assert len(rows) >= len(HOSTILE) + 1
