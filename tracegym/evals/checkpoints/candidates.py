"""The models an evaluation compares: what a reference names, how it is labelled, and its identity.

A reference is a run folder (its latest checkpoint), a checkpoint folder, any local Hugging Face model
folder, the built-in 'smollm2-135m', or `MODEL@URL` for an OpenAI-compatible endpoint. A model's identity
is what evaluation results are stored under: the sha256 of its weight files and config for a local
model, the endpoint and model name for an API.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from tracegym.errors import ConfigError
from tracegym.harnesses.policy import HFPolicyConfig, OpenAIPolicyConfig
from tracegym.models.load import resolve_model_ref
from tracegym.models.precision import Precision
from tracegym.training.checkpoint import CHECKPOINTS, CONFIG_FILE, RUN_FILE, STATE_FILE
from tracegym.training.config import TrainConfig, load_train_config, parse_train_config

_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf")
_CHUNK = 1 << 22


@dataclass(frozen=True)
class Candidate:
    """One model under evaluation."""

    label: str
    """Its name in tables: the reference given, or RUN_FOLDER/step-N for a trainer checkpoint."""
    ref: str
    """The reference as given (for an endpoint: the model name it expects)."""
    checkpoint_id: str
    """Identity results are stored under."""
    path: Path | None = None
    """The local model folder; None for an endpoint."""
    endpoint: str | None = None
    """The OpenAI-compatible base URL of an API model."""
    run_id: str | None = None
    """The training run a trainer checkpoint belongs to."""
    step: int | None = None
    """Its step (= policy version)."""
    run_dir: Path | None = None
    """Its run folder."""

    @property
    def location(self) -> str:
        return str(self.path) if self.path is not None else str(self.endpoint)


def weights_digest(folder: Path) -> str:
    """sha256 over the model's config and weight files (name and bytes, in name order)."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and (p.suffix in _WEIGHT_SUFFIXES
                                                                  or p.name == "config.json"))
    if not any(p.suffix in _WEIGHT_SUFFIXES for p in files):
        raise ConfigError(f"{folder} holds no weight files ({', '.join(_WEIGHT_SUFFIXES)}). Fix: pass a Hugging "
                          "Face model folder, a run folder or a checkpoint folder.")
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


def _trainer_checkpoint(folder: Path) -> tuple[Path, str, int] | None:
    """(run folder, run id, step) when `folder` is a checkpoint the trainer wrote."""
    run_dir = folder.parent.parent
    if folder.parent.name != CHECKPOINTS or not (folder / STATE_FILE).is_file() or not (run_dir / RUN_FILE).is_file():
        return None
    try:
        step = int(folder.name.removeprefix("step-"))
    except ValueError:
        return None
    run_id = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))["run_id"]
    return run_dir.resolve(), str(run_id), step


def local_candidate(ref: str, label: str | None = None) -> Candidate:
    """A local model: a built-in name, a model folder, a run folder or a checkpoint folder."""
    import tracegym.training.checkpoint  # noqa: F401 - registers the run-folder resolver

    folder = resolve_model_ref(ref).resolve()
    found = _trainer_checkpoint(folder)
    if found is None:
        name = Path(ref).name if Path(ref).expanduser().is_dir() else ref
        return Candidate(label or name, ref, f"sha256:{weights_digest(folder)}", folder)
    run_dir, run_id, step = found
    return Candidate(label or f"{run_dir.name}/{folder.name}", ref, f"sha256:{weights_digest(folder)}", folder,
                     run_id=run_id, step=step, run_dir=run_dir)


def api_candidate(spec: str) -> Candidate:
    """`MODEL@BASE_URL`: a model behind an OpenAI-compatible endpoint."""
    model, sep, url = spec.rpartition("@")
    if not sep or not model or not url.startswith(("http://", "https://")):
        raise ConfigError(f"--api {spec!r}: expected MODEL@BASE_URL, e.g. gpt-4o-mini@https://api.openai.com/v1.")
    url = url.rstrip("/")
    return Candidate(f"{model}@{url.split('://', 1)[1]}", model, f"api:{url}#{model}", endpoint=url)


def any_candidate(ref: str) -> Candidate:
    """`MODEL@URL` as an endpoint, anything else as a local model."""
    return api_candidate(ref) if "@http" in ref else local_candidate(ref)


def policy_config(candidate: Candidate, sampler_id: str, concurrency: int, precision: Precision = "fp32",
                  device: str = "cpu", seed: int | None = None) -> HFPolicyConfig | OpenAIPolicyConfig:
    """The client that samples from `candidate`: its endpoint (key from $OPENAI_API_KEY), or the built-in
    sampler over its folder."""
    if candidate.endpoint is not None:
        return OpenAIPolicyConfig(base_url=candidate.endpoint, model=candidate.ref, sampler_id=sampler_id,
                                  max_concurrency=concurrency)
    return HFPolicyConfig(model=str(candidate.path), precision=precision, device=device, sampler_id=sampler_id,
                          max_batch_size=concurrency, seed=seed)


def run_config(candidates: list[Candidate]) -> tuple[TrainConfig, Path] | None:
    """The train config of the first trainer checkpoint among `candidates`, and its file."""
    for c in candidates:
        if c.run_dir is not None and (c.run_dir / CONFIG_FILE).is_file():
            path = c.run_dir / CONFIG_FILE
            return parse_train_config(json.loads(path.read_text(encoding="utf-8")), path), path
    return None


def eval_config(candidates: list[Candidate], config_file: Path | None, task_set_path: Path) -> tuple[TrainConfig, str]:
    """The settings episodes run with, and where they came from: `--config`, else the checkpoints' run,
    else the trainer's defaults."""
    if config_file is not None:
        return load_train_config(config_file), str(config_file)
    found = run_config(candidates)
    if found is not None:
        return found[0], str(found[1])
    return TrainConfig(run_dir=Path("."), tasks={"task_set": task_set_path}), "the trainer's defaults"

