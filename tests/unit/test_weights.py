"""The filesystem weight broadcast: round trips, precision views, tied weights, the STABLE marker, cleanup."""

from __future__ import annotations

import shutil
from pathlib import Path

import torch

from tracegym.models.tiny import tiny_llama
from tracegym.samplers.weights.folder import (
    STABLE,
    FilesystemBroadcast,
    WeightWatcher,
    stable_versions,
)


def _model():
    return tiny_llama(64, seed=1, layers=1, hidden=16, heads=2, kv_heads=1)


def test_round_trip_is_bit_exact_in_fp32_and_the_cast_in_bf16(tmp_path: Path) -> None:
    model = _model()
    state = model.state_dict()
    FilesystemBroadcast(tmp_path / "w", ["fp32", "bf16"]).publish(state, 1)
    version, fp32 = WeightWatcher(tmp_path / "w", "fp32").poll()
    _, bf16 = WeightWatcher(tmp_path / "w", "bf16").poll()
    assert version == 1 and fp32.keys() == state.keys() == bf16.keys()
    for name, tensor in state.items():
        assert torch.equal(fp32[name], tensor), name
        assert bf16[name].dtype == torch.bfloat16 and torch.equal(bf16[name], tensor.to(torch.bfloat16)), name


def test_tied_weights_are_written_once_and_load_tied(tmp_path: Path) -> None:
    model = _model()
    assert model.lm_head.weight is model.model.embed_tokens.weight
    broadcast = FilesystemBroadcast(tmp_path / "w", ["fp32"])
    broadcast.publish(model.state_dict(), 3)
    embedding_bytes = model.lm_head.weight.numel() * 4
    total_bytes = sum(t.numel() * 4 for t in model.parameters())  # parameters() lists a tied tensor once
    assert embedding_bytes < broadcast.bytes_written < total_bytes + 4096  # header and metadata
    _, state = WeightWatcher(tmp_path / "w").poll()
    assert state["lm_head.weight"] is state["model.embed_tokens.weight"]
    fresh = _model()
    with torch.no_grad():
        for p in fresh.parameters():
            p.zero_()
    fresh.load_state_dict(state, strict=True)
    assert all(torch.equal(a, b) for a, b in zip(fresh.parameters(), model.parameters(), strict=True))


def test_a_version_is_visible_only_once_stable_and_only_once(tmp_path: Path) -> None:
    broadcast = FilesystemBroadcast(tmp_path / "w")
    watcher = WeightWatcher(tmp_path / "w")
    assert watcher.poll() is None
    state = {"w": torch.arange(4, dtype=torch.float32)}
    broadcast.publish(state, 1)
    (tmp_path / "w" / "step_1" / STABLE).unlink()  # as if it were still being written
    assert watcher.poll() is None
    (tmp_path / "w" / "step_1" / STABLE).touch()
    assert watcher.poll()[0] == 1
    assert watcher.poll() is None  # nothing newer
    broadcast.publish({"w": state["w"] + 1}, 2)
    version, got = watcher.poll()
    assert version == 2 and torch.equal(got["w"], state["w"] + 1)
    assert watcher._held is None, "without deltas a reader keeps no second copy of the weights"


def test_old_versions_are_cleaned_and_a_lower_publish_drops_the_abandoned_future(tmp_path: Path) -> None:
    broadcast = FilesystemBroadcast(tmp_path / "w", keep=2)
    state = {"w": torch.zeros(3)}
    for v in range(1, 6):
        broadcast.publish(state, v)
    assert sorted(stable_versions(tmp_path / "w")) == [4, 5]
    broadcast.publish(state, 3)  # a resumed run publishes its checkpoint's version again
    assert sorted(stable_versions(tmp_path / "w")) == [3]
    assert [p.name for p in (tmp_path / "w").iterdir() if p.name.startswith(".")] == []  # no temporary folders


def test_a_new_broadcast_starts_empty_and_a_vanished_version_is_skipped(tmp_path: Path) -> None:
    first = FilesystemBroadcast(tmp_path / "w")
    first.publish({"w": torch.zeros(2)}, 7)
    FilesystemBroadcast(tmp_path / "w")
    assert stable_versions(tmp_path / "w") == []
    broadcast = FilesystemBroadcast(tmp_path / "w")
    broadcast.publish({"w": torch.zeros(2)}, 1)
    watcher = WeightWatcher(tmp_path / "w")
    (tmp_path / "w" / "step_1" / "fp32.safetensors").unlink()  # deleted between listing and reading
    assert watcher.poll() is None and watcher.version is None
    shutil.rmtree(tmp_path / "w" / "step_1")
    broadcast.publish({"w": torch.ones(2)}, 2)
    version, state = watcher.poll()
    assert version == 2 and torch.equal(state["w"], torch.ones(2))
