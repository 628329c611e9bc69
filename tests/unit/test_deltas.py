"""Sparse weight deltas: the oracles of docs/training-math.md, and the broadcast that publishes them."""

from __future__ import annotations

import copy
import struct
from pathlib import Path

import pytest
import torch

from tracegym.errors import ModelError
from tracegym.models.tiny import tiny_llama
from tracegym.samplers.weights.deltas import apply_tensor, checksum, encode_tensor
from tracegym.samplers.weights.folder import (
    DELTA_SUFFIX,
    FilesystemBroadcast,
    FolderVersions,
    WeightWatcher,
    precision_view,
)


def _changed_copy(base: torch.Tensor, fraction: float, seed: int = 0) -> torch.Tensor:
    """`base` with a `fraction` of its elements moved by about 1%."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(base.shape, generator=g) < fraction
    return torch.where(mask, base * 1.01 + 1e-3, base).to(base.dtype)


def _ulp(b: torch.Tensor) -> torch.Tensor:
    """The bf16 cell width at each (fp32) value: 2^(floor(log2|b|) - 7)."""
    return torch.exp2(torch.floor(torch.log2(b.abs())) - 7)


@pytest.mark.parametrize("encoding", ["xor", "overwrite"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_round_trip_is_bit_exact_and_the_checksums_match(encoding: str, dtype: torch.dtype) -> None:
    base = torch.randn(300, 70, generator=torch.Generator().manual_seed(1)).to(dtype)
    new = _changed_copy(base, 0.03)
    delta = encode_tensor(new, base, encoding)
    assert delta is not None and delta.changed == int((new != base).sum())
    rebuilt = apply_tensor(base, delta)
    assert torch.equal(rebuilt.view(torch.uint8), new.view(torch.uint8))
    assert checksum({"w": rebuilt}) == checksum({"w": new}) != checksum({"w": base})
    assert len(delta.payload) < new.numel() * new.element_size() / 4, "a 3% change is much smaller than the tensor"


def test_xor_applied_twice_restores_the_base_and_overwrite_twice_changes_nothing() -> None:
    base = torch.randn(5000).to(torch.bfloat16)
    new = _changed_copy(base, 0.05)
    xor = encode_tensor(new, base, "xor")
    assert torch.equal(apply_tensor(apply_tensor(base, xor), xor), base)
    overwrite = encode_tensor(new, base, "overwrite")
    once = apply_tensor(base, overwrite)
    assert torch.equal(apply_tensor(once, overwrite), once) and torch.equal(once, new)


def test_no_change_gives_no_delta_and_an_empty_version(tmp_path: Path) -> None:
    base = torch.randn(100).to(torch.bfloat16)
    assert encode_tensor(base.clone(), base, "xor") is None and encode_tensor(base.clone(), base, "overwrite") is None
    broadcast = FilesystemBroadcast(tmp_path / "w", ["bf16"], delta="xor")
    watcher = WeightWatcher(tmp_path / "w", "bf16")
    state = {"w": base.float()}
    broadcast.publish(state, 0)
    watcher.poll()
    stats = broadcast.publish({"w": base.float().clone()}, 1)
    assert stats["sync/changed"] == 0 and stats["sync/whole"] == 0
    assert (tmp_path / "w" / "step_1" / f"bf16{DELTA_SUFFIX}").is_file()
    version, got = watcher.poll()
    assert version == 1 and torch.equal(got["w"], base)


def test_flip_rate_matches_min_1_delta_over_ulp() -> None:
    """fp32 masters anywhere in their bf16 cell: an update of |Δ| flips the cast with probability min(1, |Δ|/ulp)."""
    g = torch.Generator().manual_seed(0)
    cells = (torch.randn(400_000, generator=g) * 0.02).to(torch.bfloat16).float()
    ulp = _ulp(cells)
    masters = cells + (torch.rand(cells.shape, generator=g) - 0.5) * ulp  # uniform within the cell
    step = torch.rand(cells.shape, generator=g) * 1.5 * ulp * torch.where(torch.rand(cells.shape, generator=g) < 0.5,
                                                                           -1.0, 1.0)
    delta = encode_tensor((masters + step).to(torch.bfloat16), masters.to(torch.bfloat16), "overwrite")
    measured = delta.changed / cells.numel()
    predicted = float(torch.clamp(step.abs() / ulp, max=1.0).mean())
    assert measured == pytest.approx(predicted, abs=0.005)


def test_after_a_bf16_load_only_updates_over_half_an_ulp_change_the_cast() -> None:
    """Masters exactly on bf16 values: an update changes the cast iff it goes past half the way to the next bf16
    value in its direction (half an ulp, or a quarter going down out of the bottom of a binade)."""
    g = torch.Generator().manual_seed(1)
    base = (torch.randn(200_000, generator=g) * 0.02).to(torch.bfloat16)
    masters = base.float()  # exactly on bf16 values
    step = torch.randn(masters.shape, generator=g) * 0.4 * _ulp(masters)
    neighbour = torch.nextafter(base, torch.where(step > 0, torch.inf, -torch.inf).to(torch.bfloat16)).float()
    half_gap = (neighbour - masters).abs() / 2
    clear = ((step.abs() / half_gap - 1).abs() > 0.02)  # no ties at the midpoint
    masters, step, half_gap, base = masters[clear], step[clear], half_gap[clear], base[clear]
    delta = encode_tensor((masters + step).to(torch.bfloat16), base, "overwrite")
    expected = step.abs() > half_gap
    assert delta.changed == int(expected.sum()) > 0
    assert torch.equal(apply_tensor(base, delta) != base, expected)


def test_a_gap_over_65535_takes_the_uint32_fallback() -> None:
    base = torch.zeros(200_000, dtype=torch.bfloat16)
    far, near = base.clone(), base.clone()
    far[[5, 150_000]] = 1.0
    near[[5, 60_000]] = 1.0
    wide, narrow = encode_tensor(far, base, "overwrite"), encode_tensor(near, base, "overwrite")
    assert (wide.gap_width, narrow.gap_width) == (4, 2)
    assert torch.equal(apply_tensor(base, wide), far) and torch.equal(apply_tensor(base, narrow), near)


def _steps(n: int, seed: int = 0) -> list[dict[str, torch.Tensor]]:
    """n versions of a tiny model's weights, each a small update of the one before (a few bf16 flips a step)."""
    model = tiny_llama(64, seed=seed, layers=2, hidden=16, heads=2, kv_heads=1)
    g = torch.Generator().manual_seed(seed)
    out = []
    with torch.no_grad():
        for _ in range(n):
            out.append(copy.deepcopy(model.state_dict()))  # tied tensors stay one tensor
            for p in model.parameters():
                p.add_(torch.randn(p.shape, generator=g) * 1e-4)
    return out


def _view(state: dict[str, torch.Tensor], precision: str = "bf16") -> dict[str, torch.Tensor]:
    tensors, aliases = precision_view(state, precision)
    return {**tensors, **{name: tensors[source] for name, source in aliases.items()}}


def _equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("encoding", ["xor", "overwrite"])
def test_a_replica_catching_up_through_every_delta_equals_the_whole_version(tmp_path: Path, encoding: str) -> None:
    versions = _steps(8)
    broadcast = FilesystemBroadcast(tmp_path / "w", ["bf16", "fp32"], keep=20, delta=encoding, full_every=100)
    steady, late, fp32 = (WeightWatcher(tmp_path / "w", p) for p in ("bf16", "bf16", "fp32"))
    for version, state in enumerate(versions):
        stats = broadcast.publish(state, version)
        assert stats["sync/whole"] == (version == 0)
        if version == 0:  # whole weights in two precisions: every element of each sent
            once = sum(t.numel() for t in precision_view(state, "bf16")[0].values())  # tied tensors counted once
            assert stats["sync/changed"] == stats["sync/elements"] == 2 * once
        if version > 0:
            assert 0 < stats["sync/changed"] < stats["sync/elements"]
            assert stats["sync/bytes"] < stats["sync/dense_bytes"]
        got = steady.poll()
        assert got[0] == version and _equal(got[1], _view(state))
        if version == 1:
            late.poll()
    assert sorted(p.name for p in (tmp_path / "w" / "step_7").iterdir()) == [
        "STABLE", f"bf16{DELTA_SUFFIX}", f"fp32{DELTA_SUFFIX}"]
    version, caught_up = late.poll()  # held version 1, applies 2..7 in order
    assert version == 7 and _equal(caught_up, _view(versions[-1]))
    assert caught_up["lm_head.weight"] is caught_up["model.embed_tokens.weight"]
    assert _equal(fp32.poll()[1], _view(versions[-1], "fp32"))  # a fresh reader: whole version 0, then 1..7
    assert late.rebuilt_from_whole == 0


def test_whole_weights_every_n_versions_and_the_cleanup_keeps_what_a_new_reader_needs(tmp_path: Path) -> None:
    versions = _steps(12)
    broadcast = FilesystemBroadcast(tmp_path / "w", ["bf16"], keep=2, delta="xor", full_every=5)
    whole = [broadcast.publish(state, v)["sync/whole"] for v, state in enumerate(versions)]
    assert [v for v, w in enumerate(whole) if w] == [0, 5, 10]
    assert sorted(int(p.name.split("_")[1]) for p in (tmp_path / "w").glob("step_*")) == [10, 11]
    version, state = WeightWatcher(tmp_path / "w", "bf16").poll()
    assert version == 11 and _equal(state, _view(versions[11]))
    gap = broadcast.publish(versions[3], 20)  # a version out of sequence (a resumed run) is sent whole
    assert gap["sync/whole"] == 1


def test_a_corrupt_replica_is_rebuilt_from_whole_weights_and_a_corrupt_file_is_an_error(tmp_path: Path) -> None:
    versions = _steps(4)
    broadcast = FilesystemBroadcast(tmp_path / "w", ["bf16"], keep=10, delta="xor", full_every=100)
    watcher = WeightWatcher(tmp_path / "w", "bf16")
    broadcast.publish(versions[0], 0)
    broadcast.publish(versions[1], 1)
    watcher.poll()
    watcher._held["model.norm.weight"] = watcher._held["model.norm.weight"] + 1  # the replica went wrong
    broadcast.publish(versions[2], 2)
    version, state = watcher.poll()
    assert version == 2 and watcher.rebuilt_from_whole == 1 and _equal(state, _view(versions[2]))

    broadcast.publish(versions[3], 3)
    path = tmp_path / "w" / "step_3" / f"bf16{DELTA_SUFFIX}"
    from safetensors import safe_open
    from safetensors.torch import save_file

    with safe_open(str(path), framework="pt") as f:
        tensors, meta = {k: f.get_tensor(k) for k in f.keys()}, f.metadata()  # noqa: SIM118
    save_file(tensors, str(path), metadata={**meta, "checksum": "0" * 32})
    with pytest.raises(ModelError, match="checksum"):
        WeightWatcher(tmp_path / "w", "bf16").poll()


class _DamagedOnce(FolderVersions):
    """The broadcast's folder as a network source whose first delta arrives damaged: the first bytes of its data
    (a payload's zstd frame header) flipped."""

    damaged = 0

    def read(self, version: int, name: str) -> bytes:
        data = super().read(version, name)
        if self.damaged or not name.endswith(DELTA_SUFFIX):
            return data
        self.damaged += 1
        start = 8 + struct.unpack("<Q", data[:8])[0]
        return data[:start] + bytes(b ^ 0xFF for b in data[start:start + 4]) + data[start + 4:]


def test_a_delta_damaged_in_transit_is_read_again_from_whole_weights(tmp_path: Path) -> None:
    versions = _steps(3)
    broadcast = FilesystemBroadcast(tmp_path / "w", ["bf16"], keep=10, delta="xor", full_every=100)
    source = _DamagedOnce(tmp_path / "w")
    watcher = WeightWatcher(source, "bf16")
    for version, state in enumerate(versions):
        broadcast.publish(state, version)
        got_version, got = watcher.poll()
        assert got_version == version and _equal(got, _view(state))
    assert source.damaged == 1 and watcher.rebuilt_from_whole == 1
