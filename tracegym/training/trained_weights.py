"""The policy's weights in their variants, and what the run does with them.

Three variants: whole weights (full fine-tuning), a LoRA adapter over the frozen base (`model.lora`: peft injects its
layers into the Hugging Face model, which the trainer trains unchanged), and either of them sharded over trainer
ranks (`parallel.kind: fsdp`), where only the trainer can gather them whole. `TrainedWeights` answers, whatever the
variant:

- what to publish to the samplers: the whole weights (the adapter merged in), plus the adapter alone under
  model.lora for samplers that serve adapters;
- what to checkpoint: a Hugging Face model folder, or peft's adapter folder under model.lora;
- what the KL reference of `loss.kl_beta` is: the weights GRPO starts from, read from disk so that a resumed run
  gets the same one (the kept warm-start checkpoint, or the base model without a warm start).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from tracegym.errors import NotFoundError
from tracegym.training.checkpoint import CHECKPOINTS, checkpoint_name, save_checkpoint

if TYPE_CHECKING:
    from peft import PeftModel
    from torch import Tensor
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from tracegym.samplers.rollouts import RolloutSource
    from tracegym.samplers.weights.lora_adapters import AdapterWeights
    from tracegym.training.checkpoint import TrainerState
    from tracegym.training.config import TrainConfig
    from tracegym.training.grpo.trainer import PolicyTrainer


@dataclass(frozen=True)
class Published:
    """What the samplers are sent: the whole weights under the base model's names, and under model.lora the adapter
    alone (as peft saves it)."""

    state_dict: Mapping[str, Tensor]
    adapter: AdapterWeights | None = None


class TrainedWeights:
    """The policy being trained: `model`, the Hugging Face model the trainer trains (under model.lora, the one peft
    injected its adapter into), and what the run publishes, checkpoints and compares it with.

    Methods that take a `trainer` read the weights through it when it shards them (None: before there is one)."""

    def __init__(self, config: TrainConfig, model: PreTrainedModel, adapter: PeftModel | None = None) -> None:
        self.config = config
        self.model = model
        self.adapter = adapter
        """With model.lora: the peft model around `model`, which saves the adapter."""

    @classmethod
    def load(cls, config: TrainConfig, checkpoint: Path | None = None) -> TrainedWeights:
        """The policy to train, in training mode: the base model, or `checkpoint`'s weights; under model.lora, the
        base with a fresh adapter (B is zero: the policy starts as the base) or with the checkpoint's adapter."""
        from tracegym.models.load import load_model

        section = config.model.lora
        if section is None:
            return cls(config, load_model(checkpoint or config.model.ref, "fp32").train())
        from tracegym.training import lora

        base = load_model(config.model.ref, "fp32")
        adapter = (lora.with_adapter(base, section, config.model.ref) if checkpoint is None
                   else lora.load_trainable_adapter(base, checkpoint))
        model = cast("PreTrainedModel", adapter.get_base_model())  # the model peft injected its layers into
        return cls(config, model.train(), adapter)

    def set_trainable(self) -> int:
        """Freeze what `optim` says (the adapter alone trains under model.lora); the trainable parameters."""
        from tracegym.training.grpo.trainer import set_trainable

        if self.adapter is None:
            return set_trainable(self.model, self.config.optim)
        return sum(p.numel() for p in self.model.parameters() if p.requires_grad)

    def sampler_model(self) -> PreTrainedModel:
        """The model an in-process sampler copies: the policy itself, or under model.lora a plain copy with the
        adapter merged in (the built-in engine has no adapter support)."""
        if self.adapter is None:
            return self.model
        from tracegym.training.lora import merged_model

        return merged_model(self.adapter)

    def published(self, trainer: PolicyTrainer | None = None) -> Published:
        """What the samplers take now."""
        gathered = trainer.gathered_weights() if trainer is not None else None
        if self.adapter is None:
            return Published(gathered if gathered is not None else self.model.state_dict())
        from tracegym.training.lora import adapter_weights, merged_state_dict

        return Published(merged_state_dict(self.model, gathered), adapter_weights(self.adapter, gathered))

    def publish(self, source: RolloutSource, version: int, trainer: PolicyTrainer | None = None) -> dict[str, float]:
        """Publish the weights after step `version` to `source`; the sync's figures, and under model.lora
        `sync/adapter_bytes`, the adapter's tensors alone (what a pool serving adapters is sent) in the samplers'
        precision."""
        published = self.published(trainer)
        metrics = source.publish(published.state_dict, version, published.adapter)
        if self.adapter is not None:
            from tracegym.training.lora import adapter_bytes
            from tracegym.training.sources import publish_precision

            metrics["sync/adapter_bytes"] = float(adapter_bytes(self.model, publish_precision(self.config)))
        return metrics

    def save(self, tokenizer: PreTrainedTokenizerBase, state: TrainerState,
             trainer: PolicyTrainer | None = None) -> Path:
        """Write the checkpoint of `state`: the model folder, or under model.lora peft's adapter folder."""
        gathered = trainer.gathered_weights() if trainer is not None else None
        if gathered is not None and self.adapter is not None:  # peft saves its adapter's part, under its own names
            gathered = {f"base_model.model.{name}": tensor for name, tensor in gathered.items()}
        return save_checkpoint(self.config.run_dir, self.adapter or self.model, tokenizer, state,
                               self.config.keep_checkpoints, state_dict=gathered)

    def warm_start_folder(self) -> Path | None:
        """The kept checkpoint of the warm start's last step, when there is one."""
        step = self.config.warmup.steps
        folder = self.config.run_dir / CHECKPOINTS / checkpoint_name(step)
        return folder if step > 0 and folder.is_dir() else None

    def reference_ref(self) -> str | Path | None:
        """The frozen policy of `loss.kl_beta` (a model reference), None without one: the weights GRPO starts from,
        read from disk so that a resumed run gets the same one."""
        if self.config.loss.kl_beta <= 0:
            return None
        return self.config.model.ref if self.config.warmup.steps == 0 else self._warm_start("loss.kl_beta")

    def reference(self) -> PreTrainedModel | None:
        """The reference model of `loss.kl_beta`, loaded (None without one)."""
        from tracegym.models.load import load_model

        ref = self.reference_ref()
        return load_model(ref, "fp32") if ref is not None else None

    def grpo_start(self, resumed: Path | None) -> Path | None:
        """The checkpoint whose weights GRPO starts from, which sharded ranks load: `resumed` (a GRPO checkpoint),
        the warm start's, or None (the base model) without either."""
        if resumed is not None:
            return resumed
        return self._warm_start("parallel.kind fsdp") if self.config.warmup.steps > 0 else None

    def _warm_start(self, needed_by: str) -> Path:
        folder = self.warm_start_folder()
        if folder is None:
            raise NotFoundError(f"{needed_by} needs the warm-start checkpoint (step {self.config.warmup.steps}) in "
                                f"{self.config.run_dir / CHECKPOINTS}, and it is not there. Fix: start the run "
                                "afresh.")
        return folder
