"""`tracegym train` with model.lora on the tiny model: warm start and GRPO train the adapter alone, checkpoints are
peft adapter folders, `--resume` continues from one, `tracegym eval` evaluates them and `tracegym export` writes them
merged over the base (and as GGUF), or as the adapter alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tests.integration.train_workspace import Workspace, copy_workspace, tiny_config, write_config

pytestmark = pytest.mark.slow  # `tracegym train` end to end with LoRA, then eval and export

LORA = {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj", "up_proj", "down_proj"]}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace) -> Workspace:
    return copy_workspace(tau_workspace_template, tmp_path_factory.mktemp("lora"))


def test_a_lora_run_trains_the_adapter_and_its_checkpoints_evaluate(workspace: Workspace, tmp_path: Path,
                                                                    cli) -> None:
    from safetensors.torch import load_file

    from tracegym.models.load import load_model

    run = tmp_path / "run"
    config = write_config(tmp_path / "run.yaml", tiny_config(workspace, run, steps=2, model={
        "ref": str(workspace.tiny_model), "lora": LORA}))
    result = cli("train", str(config), "--allow-unredacted", "--store", str(workspace.store), "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["step"] == 4
    base = load_model(workspace.tiny_model)
    adapter_size = sum(4 * (m.in_features + m.out_features) for n, m in base.named_modules()
                       if n.rsplit(".", 1)[-1] in LORA["target_modules"])
    assert summary["trainable_parameters"] == adapter_size

    final = run / "checkpoints" / "step-000004"
    assert (final / "adapter_config.json").is_file() and not (final / "model.safetensors").exists()
    assert all(".lora_" in k for k in load_file(final / "adapter_model.safetensors"))
    merged = load_model(final)
    assert merged.state_dict().keys() == base.state_dict().keys()
    moved = [k for k, v in merged.state_dict().items() if not torch.equal(v, base.state_dict()[k])]
    assert moved and all(k.rsplit(".", 2)[-2] in LORA["target_modules"] for k in moved), "only adapted layers"

    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    with open_store(workspace.store, read_only=True) as store:
        metrics = read_metrics(store, summary["run_id"])
    assert metrics["sync/adapter_bytes"] == {3: 4.0 * adapter_size, 4: 4.0 * adapter_size}  # fp32 samplers

    more = write_config(tmp_path / "more.yaml", tiny_config(workspace, run, steps=3, model={
        "ref": str(workspace.tiny_model), "lora": LORA}))
    resumed = cli("train", str(more), "--allow-unredacted", "--resume", "--store", str(workspace.store), "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert json.loads(resumed.stdout)["step"] == 5

    evaluated = cli("eval", str(run), "--tasks", str(workspace.task_set), "--samples", "2", "--store",
                    str(workspace.store), "--json")
    assert evaluated.exit_code == 0, evaluated.stderr
    assert "step-000005" in evaluated.stdout


def _logits(model, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model.eval()(input_ids=ids).logits


def test_a_lora_checkpoint_exports_merged_with_gguf_or_as_the_adapter(workspace: Workspace, tmp_path: Path,
                                                                       cli) -> None:
    import yaml
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from tracegym.models.load import load_model

    run = tmp_path / "run"
    config = write_config(tmp_path / "run.yaml", tiny_config(workspace, run, steps=0, warmup={"steps": 2}, model={
        "ref": str(workspace.tiny_model), "lora": LORA}))
    assert cli("train", str(config), "--allow-unredacted", "--store", str(workspace.store)).exit_code == 0
    checkpoint = run / "checkpoints" / "step-000002"
    ids = torch.tensor([[1, 520, 2810, 30, 17, 99]])
    want = _logits(load_model(checkpoint), ids)  # what `tracegym eval` runs: the base with the adapter merged in
    assert not torch.equal(want, _logits(load_model(workspace.tiny_model), ids)), "the adapter changes the policy"

    merged = tmp_path / "merged"
    result = cli("export", str(run), "--out", str(merged), "--gguf", "--store", str(workspace.store), "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["lora"] == "merged" and "trainer_state.pt" in summary["left_out"]
    assert {"config.json", "model.safetensors", "tokenizer.json", "merged.gguf", "README.md"} <= set(summary["files"])
    assert not any(name.startswith("adapter_") for name in summary["files"])
    assert not any(p.name.startswith(".merged-") for p in tmp_path.iterdir()), "the merged folder is cleaned up"
    plain = AutoModelForCausalLM.from_pretrained(merged, dtype=torch.float32, local_files_only=True)
    assert torch.equal(_logits(plain, ids), want)
    from_gguf = AutoModelForCausalLM.from_pretrained(merged, gguf_file="merged.gguf", dtype=torch.float32)
    torch.testing.assert_close(_logits(from_gguf, ids), want, rtol=0, atol=1e-5)
    assert "with the adapter merged in" in (merged / "README.md").read_text(encoding="utf-8")

    alone = tmp_path / "adapter"
    result = cli("export", str(checkpoint), "--out", str(alone), "--adapter", "--store", str(workspace.store),
                 "--json")
    assert result.exit_code == 0, result.stderr
    files = set(json.loads(result.stdout)["files"])
    assert {"adapter_config.json", "adapter_model.safetensors", "tokenizer.json", "README.md"} <= files
    assert not files & {"model.safetensors", "config.json", "trainer_state.pt"}
    card = (alone / "README.md").read_text(encoding="utf-8")
    assert yaml.safe_load(card.removeprefix("---\n").split("\n---\n", 1)[0])["library_name"] == "peft"
    base = AutoModelForCausalLM.from_pretrained(workspace.tiny_model, dtype=torch.float32, local_files_only=True)
    # unmerged (Wx + B(Ax)) sums in another order than merged (W + BA)x
    torch.testing.assert_close(_logits(PeftModel.from_pretrained(base, alone), ids), want, rtol=1e-4, atol=1e-4)

    # --adapter of full weights, --adapter with --gguf: refused
    for args, message in (((str(workspace.tiny_model), "--adapter"), "holds full weights, not a LoRA adapter"),
                          ((str(checkpoint), "--adapter", "--gguf"), "Fix: drop one of them")):
        refused = cli("export", *args, "--out", str(tmp_path / "refused"), "--store", str(workspace.store))
        assert refused.exit_code == 2 and message in refused.stderr
    assert not (tmp_path / "refused").exists()
