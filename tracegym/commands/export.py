"""`tracegym export CHECKPOINT --out DIR`: a checkpoint as a clean Hugging Face folder with a model card."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tracegym.output import JsonOpt, StoreOpt, err, literal, out, print_json


def register(app: typer.Typer) -> None:
    app.command("export")(export)


def export(
    checkpoint: Annotated[str, typer.Argument(
        help="A checkpoint folder (RUN/checkpoints/step-N) or a run folder (its latest checkpoint).")],
    to: Annotated[Path, typer.Option("--out", help="The folder to write; must be new or empty.")],
    force: Annotated[bool, typer.Option("--force", help="Replace the contents of a non-empty --out.")] = False,
    gguf: Annotated[bool, typer.Option("--gguf", help="Also write an unquantized GGUF file (Llama-architecture "
                                                      "models), for llama.cpp and its kin.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write the checkpoint's model and tokenizer without optimizer state, and a model card (README.md) with its
    base model, task set, failure clusters, evaluations from the store and lineage."""
    from tracegym.store import default_store_path, open_store
    from tracegym.training.candidates import local_candidate
    from tracegym.training.export import CARD_FILE, check_destination, export_folder
    from tracegym.training.modelcard import CardFacts, read_facts, render_card

    found = local_candidate(checkpoint)
    source = Path(found.location)  # a local model's folder
    check_destination(to, source, force)  # before reading the store: a refusal should come at once
    facts = CardFacts(name=to.name, checkpoint=str(source), checkpoint_id=found.checkpoint_id,
                      run_id=found.run_id, step=found.step)
    store_path = store or default_store_path()
    if store_path.exists():
        with open_store(store_path, read_only=True) as st:
            read_facts(st, facts)
        facts.store = str(store_path)
    else:
        err.print(f"No store at {literal(store_path)}: the card names no clusters or evaluations. "
                  "Fix: pass the --store the checkpoint was trained and evaluated with.")

    def extras(folder: Path) -> None:
        if gguf:
            from tracegym.training.gguf_export import write_gguf

            facts.gguf = write_gguf(source, folder, to.name).name
        (folder / CARD_FILE).write_text(render_card(facts), encoding="utf-8")

    result = export_folder(source, to, force, extras)
    summary = {"out": str(result.out), "checkpoint": str(source), "run_id": found.run_id, "step": found.step,
               "files": result.files, "left_out": result.left_out, "checkpoint_bytes": result.source_bytes,
               "export_bytes": result.out_bytes, "evaluations": len(facts.evaluations),
               "clusters": len(facts.clusters)}
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
