"""The model card names the base model by a name that means the same anywhere, never a path relative to a folder
the reader cannot know."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    assert "- Base model: `tiny-model (a local model folder)`" in card and "../" not in card
    built_in = render_card(CardFacts(name="served", checkpoint=str(Path("/abs/c")), checkpoint_id="c" * 64,
                                     base_model="smollm2-135m"))
    assert "base_model: HuggingFaceTB/SmolLM2-135M-Instruct" in built_in
