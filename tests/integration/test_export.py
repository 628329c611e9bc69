"""`tracegym export` on a real run: a tiny model trained on the τ-bench tasks, evaluated, then exported.

The exported folder must load with transformers alone and compute what the checkpoint computes; it must hold
no trainer state; its card must name the base model, task set, clusters, the evaluation's figures and lineage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from tests.integration.train_workspace import Workspace, copy_workspace, tiny_config, write_config
from tracegym.export.modelcard import md_text

pytestmark = pytest.mark.slow  # the module's run is trained and evaluated end to end

PROMPTS = ("Hello, I need to change my flight.", "Cancel reservation ABC123 please.", "What is my baggage allowance?")


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace
              ) -> tuple[Workspace, Path, dict[str, Any]]:
    """A run of 2 warm-start and 2 GRPO steps, and `tracegym eval` of its last checkpoint against the base."""
    from typer.testing import CliRunner

    from tracegym.cli import app

    root = tmp_path_factory.mktemp("export")
    ws = copy_workspace(tau_workspace_template, root)
    config = write_config(root / "run.yaml", tiny_config(ws, root / "run", steps=2))
    runner = CliRunner()
    result = runner.invoke(app, ["train", str(config), "--allow-unredacted", "--store", str(ws.store)],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    result = runner.invoke(app, ["eval", str(root / "run"), "--tasks", str(ws.task_set), "--samples", "1",
                                 "--store", str(ws.store), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return ws, root / "run", json.loads(result.stdout)


def _load(folder: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, local_files_only=True).eval()
    return model, AutoTokenizer.from_pretrained(folder, local_files_only=True)


def _outputs(folder: Path) -> list[tuple[torch.Tensor, list[int]]]:
    """Per prompt (in the chat template): the logits of the prompt, and 12 greedy tokens."""
    model, tokenizer = _load(folder)
    found = []
    for prompt in PROMPTS:
        ids = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                            return_tensors="pt", return_dict=True)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0]
            greedy = model.generate(ids, max_new_tokens=12, do_sample=False)[0, ids.shape[1]:].tolist()
        found.append((logits, greedy))
    return found


def test_export_loads_alone_and_computes_as_the_checkpoint(cli, evaluated, tmp_path):
    ws, run, table = evaluated
    checkpoint = run / "checkpoints" / "step-000004"
    out = tmp_path / "served"
    result = cli("export", run, "--out", out, "--store", ws.store, "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert Path(summary["checkpoint"]) == checkpoint.resolve() and summary["step"] == 4
    assert summary["left_out"] == ["trainer_state.pt"] and summary["export_bytes"] < summary["checkpoint_bytes"]

    names = {p.name for p in out.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "README.md"} <= names
    assert not any(n.endswith((".pt", ".bin")) or "optim" in n or "state" in n for n in names)
    for (logits, greedy), (want_logits, want_greedy) in zip(_outputs(out), _outputs(checkpoint), strict=True):
        assert torch.equal(logits, want_logits) and greedy == want_greedy and len(greedy) > 0


def test_model_card_states_base_task_set_clusters_evaluation_and_lineage(cli, evaluated, tmp_path):
    from tracegym.store import open_store

    ws, run, table = evaluated
    out = tmp_path / "served"
    assert cli("export", run / "checkpoints" / "step-000004", "--out", out, "--store", ws.store).exit_code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    head, body = card.removeprefix("---\n").split("\n---\n", 1)
    meta = yaml.safe_load(head)
    assert meta["library_name"] == "transformers" and "base_model" not in meta  # a local folder is no Hub id
    assert f"- Base model: {md_text(str(ws.tiny_model))}" in body and "- Task set: tau" in body

    with open_store(ws.store, read_only=True) as st:
        clusters = {r["cluster_id"] for r in st.query("SELECT DISTINCT cluster_id FROM tasks WHERE task_set_id = "
                                                      "'tau' AND cluster_id IS NOT NULL")}
        sampled = {r["cluster_id"]: r["n"] for r in st.query(
            "SELECT t.cluster_id, count(*) AS n FROM rollouts r JOIN runs USING (run_id) JOIN tasks t "
            "ON t.task_set_id = r.task_set_id AND t.task_id = r.task_id GROUP BY ALL")}
    assert len(clusters) >= 2 and sampled
    rows = {line.split(" | ")[0].removeprefix("| "): line.split(" | ") for line in body.splitlines()
            if line.startswith("| ")}
    for cluster_id in clusters:
        assert rows[md_text(cluster_id)][-2] == str(sampled.get(cluster_id, 0))  # the rollouts sampled from it
        assert f"`tracegym lineage` {md_text(cluster_id)}:" in body

    overall = table["groups"][0]
    [row] = [r for r in overall["rows"] if r["model"] == "run/step-000004"]
    [base] = [r for r in overall["rows"] if r["model"] == "tiny-model"]
    [result] = meta["model-index"][0]["results"]
    assert result["dataset"]["name"] == "tau" and result["dataset"]["split"] == "heldout"
    figures = {m["type"]: m["value"] for m in result["metrics"]}
    assert figures["mean_reward"] == pytest.approx(row["reward"]["value"], abs=1e-4)
    assert figures["pass_rate"] == pytest.approx(row["pass@1"]["value"], abs=1e-4)
    line = (f"| {table['eval_id']} | heldout | {overall['tasks']} | {overall['tasks']} | "
            f"{row['reward']['value']:.3f} | {base['reward']['value']:.3f} |")
    assert line in body
    assert "trainer_state.pt" in body and "no LoRA adapter" in body


def test_export_refuses_a_non_empty_folder_unless_forced(cli, evaluated, tmp_path):
    ws, run, _ = evaluated
    out = tmp_path / "busy"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    refused = cli("export", run, "--out", out, "--store", ws.store)
    assert refused.exit_code == 2 and "not empty" in refused.stderr and "--force" in refused.stderr
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    inside = cli("export", run, "--out", run, "--store", ws.store)
    assert inside.exit_code == 2 and "would delete it" in inside.stderr
    forced = cli("export", run, "--out", out, "--force", "--store", ws.store)
    assert forced.exit_code == 0, forced.stderr
    assert not (out / "notes.txt").exists() and (out / "model.safetensors").is_file()
    missing = cli("export", tmp_path / "nowhere", "--out", tmp_path / "x", "--store", ws.store)
    assert missing.exit_code == 2 and not (tmp_path / "x").exists()


def test_gguf_export_loads_with_transformers_and_computes_as_the_checkpoint(cli, evaluated, tmp_path):
    """The GGUF file, read back by transformers' own GGUF loader (which undoes the q/k permutation), gives the
    checkpoint's logits; its vocabulary tokenizes as the checkpoint's tokenizer does."""
    import gguf
    from transformers import AutoModelForCausalLM, AutoTokenizer

    ws, run, _ = evaluated
    out = tmp_path / "served"
    result = cli("export", run, "--out", out, "--gguf", "--store", ws.store)
    assert result.exit_code == 0, result.stderr
    reader = gguf.GGUFReader(out / "served.gguf")
    assert reader.fields["general.architecture"].contents() == "llama"
    assert reader.fields["tokenizer.ggml.pre"].contents() == "smollm"  # the tiny model has SmolLM2's vocabulary
    assert "- GGUF: served.gguf (" in (out / "README.md").read_text(encoding="utf-8")

    model, tokenizer = _load(run / "checkpoints" / "step-000004")
    from_gguf = AutoModelForCausalLM.from_pretrained(out, gguf_file="served.gguf", dtype=torch.float32).eval()
    gguf_tokenizer = AutoTokenizer.from_pretrained(out, gguf_file="served.gguf")
    for prompt in PROMPTS:
        text = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                             tokenize=False)
        ids = tokenizer(text, return_tensors="pt")["input_ids"]
        assert gguf_tokenizer(text)["input_ids"] == ids[0].tolist()
        with torch.no_grad():
            torch.testing.assert_close(from_gguf(input_ids=ids).logits, model(input_ids=ids).logits,
                                       rtol=0, atol=1e-5)
