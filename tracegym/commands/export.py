"""`tracegym export CHECKPOINT --out DIR`: a checkpoint as a clean Hugging Face folder with a model card."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tracegym.output import JsonOpt, StoreOpt, err, literal, out, print_json

if TYPE_CHECKING:
    from tracegym.export.hf_folder import ExportResult
    from tracegym.export.modelcard import CardFacts


def register(app: typer.Typer) -> None:
    app.command("export")(export)


def export(
    checkpoint: Annotated[str, typer.Argument(
        help="A checkpoint folder (RUN/checkpoints/step-N) or a run folder (its latest checkpoint).")],
    to: Annotated[Path, typer.Option("--out", help="The folder to write; must be new or empty.")],
    force: Annotated[bool, typer.Option("--force", help="Replace the contents of a non-empty --out.")] = False,
    gguf: Annotated[bool, typer.Option("--gguf", help="Also write an unquantized GGUF file (Llama-architecture "
                                                      "models), for llama.cpp and its kin.")] = False,
    adapter: Annotated[bool, typer.Option("--adapter", help="For a LoRA checkpoint (model.lora): write the peft "
                                                            "adapter alone, not the base with it merged in.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write the checkpoint's model and tokenizer without optimizer state, and a model card (README.md) with its
    base model, task set, failure clusters, evaluations from the store and lineage. A LoRA checkpoint is written as
    its base model with the adapter merged in, or with --adapter as the adapter alone."""
    from tracegym.errors import ConfigError
    from tracegym.evals.checkpoints.candidates import local_candidate
    from tracegym.export.hf_folder import check_destination, is_adapter_folder
    from tracegym.export.modelcard import CardFacts, read_facts
    from tracegym.store import default_store_path, open_store

    found = local_candidate(checkpoint)
    source = Path(found.location)  # a local model's folder
    check_destination(to, source, force)  # before reading the store: a refusal should come at once
    lora = is_adapter_folder(source)
    if adapter and not lora:
        raise ConfigError(f"--adapter: {source} holds full weights, not a LoRA adapter. Fix: drop --adapter.")
    if adapter and gguf:
        raise ConfigError("--adapter writes the LoRA adapter alone, and --gguf a whole model. Fix: drop one of them "
                          "(without --adapter, the GGUF file holds the base with the adapter merged in).")
    facts = CardFacts(name=to.name, checkpoint=str(source.resolve()), checkpoint_id=found.checkpoint_id,
                      run_id=found.run_id, step=found.step, lora=("adapter" if adapter else "merged") if lora else None)
    store_path = store or default_store_path()
    if store_path.exists():
        with open_store(store_path, read_only=True) as st:
            read_facts(st, facts)
        facts.store = str(store_path.resolve())
    else:
        err.print(f"No store at {literal(store_path)}: the card names no clusters or evaluations. "
                  "Fix: pass the --store the checkpoint was trained and evaluated with.")

    result = _write(source, to, force, facts, gguf, merge=lora and not adapter)
    summary = {"out": str(result.out), "checkpoint": str(source), "run_id": found.run_id, "step": found.step,
               "files": result.files, "left_out": result.left_out, "checkpoint_bytes": result.source_bytes,
               "export_bytes": result.out_bytes, "evaluations": len(facts.evaluations),
               "clusters": len(facts.clusters), "lora": facts.lora}
    if as_json:
        print_json(summary)
        return
    mb = 1 << 20
    out.print(f"Exported {literal(source)} to {literal(result.out)}: {result.out_bytes / mb:.1f} MB "
              f"(checkpoint {result.source_bytes / mb:.1f} MB).")
    out.print(f"Files: {literal(', '.join(result.files))}")
    if result.left_out:
        out.print(f"Left out: {literal(', '.join(result.left_out))}")
    out.print(f"Model card: {len(facts.clusters)} clusters, {len(facts.evaluations)} evaluations.")


def _write(source: Path, to: Path, force: bool, facts: CardFacts, gguf: bool, merge: bool) -> ExportResult:
    """The export of `source` (merged first when it is an adapter to merge), its card and GGUF file written in."""
    from tracegym.export.hf_folder import (
        ADAPTER_FILES,
        CARD_FILE,
        export_folder,
        folder_size,
        is_model_file,
        merged_adapter,
    )
    from tracegym.export.modelcard import render_card

    def write(model_folder: Path) -> ExportResult:
        def extras(folder: Path) -> None:
            if gguf:
                from tracegym.export.gguf import write_gguf

                facts.gguf = write_gguf(model_folder, folder, to.name).name
            (folder / CARD_FILE).write_text(render_card(facts), encoding="utf-8")

        return export_folder(model_folder, to, force, extras, adapter=facts.lora == "adapter")

    if not merge:
        return write(source)
    with merged_adapter(source, to.parent) as merged:
        result = write(merged)
    # What the merged folder holds is the adapter's checkpoint: its own trainer state and marks are what is left out.
    result.left_out = sorted(p.name for p in source.iterdir() if p.is_file() and not is_model_file(p.name)
                             and p.name not in ADAPTER_FILES) + sorted(p.name + "/" for p in source.iterdir()
                                                                       if p.is_dir())
    result.source_bytes = folder_size(source)
    return result
