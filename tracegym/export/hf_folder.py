"""`tracegym export`: a checkpoint as a clean Hugging Face model folder for serving.

A trainer checkpoint is a model folder plus what only a resumed run needs (`trainer_state.pt`: optimizer
moments, RNG states, the data position) and the `.keep` mark. The export takes the files a serving stack loads
(config, generation config, safetensors weights and their index, tokenizer files, chat template) and nothing
else, writes a model card (`README.md`, see `tracegym.export.modelcard`) beside them, and optionally a GGUF
file (`tracegym.export.gguf`).

A LoRA checkpoint (`model.lora`: a peft adapter folder) is exported merged by default: the base with the adapter
merged in, written as a full model folder first (`merged_adapter`), then exported as any checkpoint; or, asked
for, as the adapter alone (`ADAPTER_FILES` plus the tokenizer), which peft and vLLM load over the base.

The folder is built in a temporary sibling and renamed into place, so an interrupted export leaves no half
folder; an existing non-empty folder is replaced only when asked (`force`).
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tracegym.errors import ConfigError

# What `save_pretrained` of a causal LM and its tokenizer writes; anything else in a checkpoint is left out.
MODEL_FILES = (
    "config.json", "generation_config.json", "*.safetensors", "model.safetensors.index.json",
    "tokenizer.json", "tokenizer_config.json", "tokenizer.model", "special_tokens_map.json", "added_tokens.json",
    "vocab.json", "merges.txt", "chat_template.jinja", "chat_template.json",
)
CARD_FILE = "README.md"
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")


@dataclass
class ExportResult:
    out: Path
    """The exported folder."""
    files: list[str]
    """The files written, by name."""
    left_out: list[str] = field(default_factory=list)
    """Files of the checkpoint that are not part of a serving model (trainer state, marks)."""
    source_bytes: int = 0
    """Size of the checkpoint folder."""
    out_bytes: int = 0
    """Size of the exported folder."""


def is_model_file(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in MODEL_FILES)


def is_adapter_folder(folder: Path) -> bool:
    return (folder / ADAPTER_FILES[0]).is_file()


@contextmanager
def merged_adapter(source: Path, beside: Path) -> Iterator[Path]:
    """The adapter folder `source` as a full model folder (its base with the adapter merged in, and its tokenizer),
    written into a temporary folder next to `beside` for the time of the block."""
    from tracegym.models.load import load_model

    model = load_model(source, "fp32")  # the adapter merged over the base model it names
    beside.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=beside, prefix=".merged-") as tmp:
        folder = Path(tmp)
        model.save_pretrained(folder, safe_serialization=True)
        for path in source.iterdir():  # the tokenizer files the trainer saved beside the adapter
            if path.is_file() and is_model_file(path.name) and not path.name.endswith(".safetensors"):
                shutil.copyfile(path, folder / path.name)
        yield folder


def check_destination(out: Path, source: Path, force: bool) -> None:
    """Refuse a destination that would lose data: a file, a non-empty folder without `force`, or a folder that
    is or holds the checkpoint itself."""
    out_r, source_r = out.resolve(), source.resolve()
    if out_r == source_r or source_r.is_relative_to(out_r):
        raise ConfigError(f"--out {out} holds the checkpoint {source}: exporting there would delete it. "
                          "Fix: choose another folder.")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file. Fix: choose a folder.")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise ConfigError(f"--out {out} is not empty. Fix: choose an empty or new folder, or pass --force to "
                          "replace its contents.")


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def export_folder(source: Path, out: Path, force: bool, extras: Callable[[Path], None],
                  adapter: bool = False) -> ExportResult:
    """Copy the model files of `source` into `out` (with `adapter`, those of a peft adapter folder), let `extras`
    write more files into the new folder (the card, a GGUF file), then move it into place."""
    check_destination(out, source, force)
    names = sorted(p.name for p in source.iterdir() if p.is_file())
    if adapter:
        kept = [n for n in names if n in ADAPTER_FILES or (is_model_file(n) and not n.endswith(".safetensors"))]
        if not set(ADAPTER_FILES) <= set(kept):
            raise ConfigError(f"{source} is not a peft adapter folder ({' and '.join(ADAPTER_FILES)}).")
    else:
        kept = [n for n in names if is_model_file(n)]
        if not any(n.endswith(".safetensors") for n in kept) or "config.json" not in kept:
            raise ConfigError(f"{source} is not a model folder with safetensors weights and a config.json.")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        for name in kept:
            shutil.copyfile(source / name, tmp / name)
        extras(tmp)
        _replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    left_out = [n for n in names if n not in kept] + sorted(p.name + "/" for p in source.iterdir() if p.is_dir())
    return ExportResult(out, sorted(p.name for p in out.iterdir()), left_out, folder_size(source), folder_size(out))


def _replace(tmp: Path, out: Path) -> None:
    """Rename `tmp` to `out`; a folder already there (empty, or replaced under --force) goes first."""
    if out.is_dir():
        shutil.rmtree(out)
    os.rename(tmp, out)
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(out, 0o777 & ~mask)  # mkdtemp made it owner-only; a model folder is made as any other folder
