"""What an evaluation compares: model identity by weights, trainer checkpoints, endpoints, eval ids."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tracegym.errors import ConfigError
from tracegym.evals.checkpoints.candidates import api_candidate, local_candidate, weights_digest


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tracegym.models.tiny import tiny_llama

    folder = tmp_path_factory.mktemp("model") / "tiny"
    tiny_llama(64, seed=0, layers=1, hidden=16, heads=2, kv_heads=1, eos_token_id=2).save_pretrained(folder)
    return folder


def test_identity_follows_the_weights_not_the_path(model_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere"
    shutil.copytree(model_dir, copy)
    a, b = local_candidate(str(model_dir)), local_candidate(str(copy))
    assert a.checkpoint_id == b.checkpoint_id and a.path != b.path
    assert a.label == "tiny" and a.run_id is None and a.step is None

    from tracegym.models.tiny import tiny_llama

    tiny_llama(64, seed=1, layers=1, hidden=16, heads=2, kv_heads=1, eos_token_id=2).save_pretrained(copy)
    assert weights_digest(copy) != weights_digest(model_dir)


def test_a_run_folder_is_its_latest_trainer_checkpoint(model_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    for step in (4, 8):
        folder = run / "checkpoints" / f"step-{step:06d}"
        shutil.copytree(model_dir, folder)
        (folder / "trainer_state.pt").write_bytes(b"state")
    (run / "checkpoints" / "latest").write_text("step-000008")
    (run / "run.json").write_text(json.dumps({"run_id": "run-abc"}))
    latest = local_candidate(str(run))
    assert (latest.run_id, latest.step, latest.label) == ("run-abc", 8, "run/step-000008")
    earlier = local_candidate(str(run / "checkpoints" / "step-000004"))
    assert (earlier.run_id, earlier.step) == ("run-abc", 4)
    assert earlier.checkpoint_id == latest.checkpoint_id, "identical weights are one model whatever the step"


def test_a_folder_without_weights_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="no weight files"):
        local_candidate(str(tmp_path))


def test_api_baselines() -> None:
    c = api_candidate("gpt-4o-mini@https://api.openai.com/v1/")
    assert (c.ref, c.endpoint, c.label) == ("gpt-4o-mini", "https://api.openai.com/v1", "gpt-4o-mini@api.openai.com/v1")
    assert c.checkpoint_id == "api:https://api.openai.com/v1#gpt-4o-mini" and c.path is None
    assert api_candidate("org/model@v2@http://localhost:8000/v1").ref == "org/model@v2"
    for bad in ("gpt-4o-mini", "@http://x", "m@ftp://x"):
        with pytest.raises(ConfigError, match="MODEL@BASE_URL"):
            api_candidate(bad)
