"""The model card of an exported checkpoint: what it was trained from, on what, and how it scored.

Facts come from the checkpoint's run folder and the store: the run (base model, task set, config), the task
set's failure clusters with their train and held-out tasks and the rollouts trained on them (the `lineage`
view), and every evaluation of these exact weights (`eval_results` rows under the weights' sha256, the identity
`tracegym eval` stores them under), with the base model's figures on the same tasks and seeds.

The card is `README.md` with YAML front matter, as the Hugging Face Hub reads it: `base_model` only when it is
a Hub id (a local path would fail the Hub's check), and the evaluations as `model-index` results. Text from the
store (signatures, ids, task names: trace content) is written through `one_line`, so it cannot break the Markdown
tables or the YAML, and in the Markdown body as inert text (`md_text`): HTML's `<`, `>` and `&` as entities,
Markdown's link, image, code and emphasis characters backslash-escaped, and bare URLs and e-mail addresses broken
so that no renderer links them. A hostile signature renders as the text it is, never as a tag or a link.
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

import yaml

from tracegym.inert import one_line
from tracegym.models.load import SMOLLM2_ALIASES

if TYPE_CHECKING:
    from tracegym.store import Store

# The Hub id of a built-in model name, for `base_model` in the front matter.
HUB_IDS = dict.fromkeys(SMOLLM2_ALIASES, "HuggingFaceTB/SmolLM2-135M-Instruct")


@dataclass
class CardFacts:
    name: str
    """The exported folder's name: the model's name on the card."""
    checkpoint: str
    """The checkpoint folder it came from."""
    checkpoint_id: str
    """sha256 of its config and weights: the identity evaluations are stored under."""
    run_id: str | None = None
    step: int | None = None
    base_model: str | None = None
    """The run's `model.ref`: a built-in name, or a folder's absolute path (see `base_model_identity`)."""
    task_set_id: str | None = None
    run: dict[str, Any] | None = None
    """status and started_at (from the store's `runs` row)."""
    clusters: list[dict[str, Any]] = field(default_factory=list)
    """Per cluster of the task set: id, detector, signature, rank, train/held-out tasks, rollouts trained on."""
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    """Per evaluation of these weights: eval id, split, tasks, samples, reward and pass rate, with the base's."""
    cluster_evals: list[dict[str, Any]] = field(default_factory=list)
    """Per evaluation and cluster: the same figures."""
    store: str | None = None
    """The store the facts were read from; None when there was none."""
    gguf: str | None = None
    """The GGUF file written beside the model, by name."""
    lora: str | None = None
    """For a LoRA checkpoint (a peft adapter folder): 'merged' (exported as the base with the adapter merged in) or
    'adapter' (exported as the adapter alone); None for full weights."""


def read_facts(store: Store, facts: CardFacts) -> CardFacts:
    """Fill `facts` from the store: the run, its task set's clusters and lineage, the evaluations."""
    if facts.run_id is not None:
        rows = store.query("SELECT status, started_at, base_model, task_set_id, config, run_dir FROM runs "
                           "WHERE run_id = ?", [facts.run_id])
        if rows:
            run = rows[0]
            config, run_dir = json.loads(run.pop("config") or "{}"), run.pop("run_dir")
            facts.base_model = base_model_identity(run.pop("base_model"), config.get("run_dir"), run_dir)
            facts.task_set_id = run.pop("task_set_id")
            facts.run = run
    if facts.task_set_id is not None:
        facts.clusters = _clusters(store, facts.task_set_id, facts.run_id)
    facts.evaluations = _evaluations(store, facts.checkpoint_id, by_cluster=False)
    facts.cluster_evals = _evaluations(store, facts.checkpoint_id, by_cluster=True)
    return facts


def base_model_identity(ref: str | None, given_run_dir: str | None, run_dir: str | None) -> str | None:
    """The run's base model as a name that means the same anywhere: a built-in name, or a folder's absolute path.

    Runs record it so; runs recorded before kept the path as given, relative to the folder the run was started in.
    That folder is the run folder's absolute path (`run_dir`) less the run_dir its config gave, when that was
    relative; else the card names the folder alone."""
    if ref is None or ref.lower() in SMOLLM2_ALIASES or Path(ref).expanduser().is_absolute():
        return ref
    given = PurePath(given_run_dir or "")
    if run_dir and given.parts and not given.is_absolute() and ".." not in given.parts \
            and PurePath(run_dir).parts[-len(given.parts):] == given.parts:
        started_in = PurePath(*PurePath(run_dir).parts[:-len(given.parts)])
        return os.path.normpath(started_in / ref)
    return f"{PurePath(os.path.normpath(ref)).name} (a local model folder)"


def _clusters(store: Store, task_set_id: str, run_id: str | None) -> list[dict[str, Any]]:
    return store.query(
        """SELECT t.cluster_id, any_value(t.detector) AS detector,
                  any_value(coalesce(c.signature, t.spec->>'$.provenance.signature')) AS signature,
                  min(c.rank) AS rank,
                  count(*) FILTER (WHERE t.split = 'train') AS train_tasks,
                  count(*) FILTER (WHERE t.split = 'heldout') AS heldout_tasks,
                  count(DISTINCT t.source_trace_id) AS source_traces,
                  coalesce(any_value(r.sampled), 0) AS rollouts_sampled,
                  coalesce(any_value(r.trained), 0) AS rollouts_trained_on
           FROM tasks t LEFT JOIN clusters c ON c.cluster_id = t.cluster_id
           LEFT JOIN (SELECT cluster_id, sum(sampled_rollouts) AS sampled, sum(train_rollouts) AS trained
                      FROM (SELECT DISTINCT cluster_id, task_id, sampled_rollouts, train_rollouts FROM lineage
                            WHERE task_set_id = ? AND run_id = ?) GROUP BY cluster_id) r
                  ON r.cluster_id IS NOT DISTINCT FROM t.cluster_id
           WHERE t.task_set_id = ? GROUP BY t.cluster_id ORDER BY min(c.rank) NULLS LAST, t.cluster_id""",
        [task_set_id, run_id, task_set_id])


def _evaluations(store: Store, checkpoint_id: str, by_cluster: bool) -> list[dict[str, Any]]:
    """Mean over tasks of each task's mean reward (unscored samples count 0, as in `tracegym eval`) and pass
    rate, for these weights and for the base they were compared with, on the tasks both ran."""
    cluster, keys = ("p.cluster_id", "m.eval_id, p.cluster_id") if by_cluster else ("NULL", "m.eval_id")
    return store.query(
        f"""WITH per_task AS (
                SELECT eval_id, checkpoint_id, task_id, any_value(cluster_id) AS cluster_id,
                       any_value(split) AS split, count(*) AS samples,
                       avg(coalesce(reward, 0)) AS reward, avg(CAST(pass AS DOUBLE)) AS pass_rate
                FROM eval_results GROUP BY ALL),
            mine AS (SELECT DISTINCT eval_id, base_checkpoint_id FROM eval_models WHERE checkpoint_id = ?)
            SELECT m.eval_id, any_value(e.task_set_id) AS task_set_id, {cluster} AS cluster_id,
                   any_value(p.split) AS split, count(*) AS tasks, sum(p.samples) AS samples,
                   avg(p.reward) AS reward, avg(b.reward) AS base_reward,
                   avg(p.pass_rate) AS pass_rate, avg(b.pass_rate) AS base_pass_rate,
                   any_value(bm.checkpoint) AS base
            FROM mine m JOIN evaluations e USING (eval_id)
            JOIN per_task p ON p.eval_id = m.eval_id AND p.checkpoint_id = ?
            LEFT JOIN per_task b ON b.eval_id = m.eval_id AND b.checkpoint_id = m.base_checkpoint_id
                                AND b.task_id = p.task_id
            LEFT JOIN eval_models bm ON bm.eval_id = m.eval_id AND bm.checkpoint_id = m.base_checkpoint_id
                                    AND bm.base_checkpoint_id IS NULL
            GROUP BY {keys} ORDER BY {keys}""",
        [checkpoint_id, checkpoint_id])


def front_matter(facts: CardFacts) -> dict[str, Any]:
    """The YAML header: Hub metadata, and the evaluations as `model-index` results."""
    meta: dict[str, Any] = {"library_name": "peft" if facts.lora == "adapter" else "transformers",
                            "pipeline_tag": "text-generation",
                            "tags": ["tracegym", "grpo", "reinforcement-learning"]}
    hub_id = HUB_IDS.get((facts.base_model or "").lower())
    if hub_id is not None:
        meta["base_model"] = hub_id
    results = [{
        "task": {"type": "text-generation", "name": "agent tasks from failure clusters"},
        "dataset": {"type": "tracegym-task-set", "name": one_line(str(e["task_set_id"])),
                    "split": one_line(str(e["split"]))},
        "metrics": [{"type": "mean_reward", "name": "mean reward", "value": round(e["reward"], 4)},
                    {"type": "pass_rate", "name": "pass@1", "value": round(e["pass_rate"], 4)}],
        "source": {"name": f"tracegym eval {one_line(e['eval_id'])}"},
    } for e in facts.evaluations]
    if results:
        meta["model-index"] = [{"name": one_line(facts.name), "results": results}]
    return meta


_MARKDOWN = re.compile(r"([\\`*_\[\]()!|~#@])")
"""Characters that start Markdown links, images, code, emphasis, headings, table cells or e-mail autolinks."""
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9]):(?=//)|(?<=\bwww)\.")
"""Where a bare URL (`scheme://`, `www.`) would be linked by GFM's autolinks: an escape there splits the text."""


def md_text(text: str) -> str:
    """`text` on one line as inert Markdown: rendered, it shows these characters and makes no tag, link or code."""
    escaped = _AUTOLINK.sub(lambda m: "\\" + m.group(), _MARKDOWN.sub(r"\\\1", one_line(text)))
    return html.escape(escaped, quote=False)


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return md_text(str(value))


def _table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> list[str]:
    lines = ["| " + " | ".join(title for _, title in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_fmt(r.get(key)) for key, _ in columns) + " |" for r in rows]
    return lines


def render_card(facts: CardFacts) -> str:
    """README.md: front matter, then base model, training, clusters, evaluations, lineage and what is left out."""
    header = yaml.safe_dump(front_matter(facts), sort_keys=False, allow_unicode=True)
    lines = [f"---\n{header}---", "", f"# {_fmt(facts.name)}", "",
             "Exported by `tracegym export` for serving: the weights and tokenizer of one training checkpoint, "
             "without optimizer or trainer state.", ""]
    lines += _training_section(facts)
    lines += ["", "## Failure clusters", ""]
    if facts.clusters:
        lines += _table(facts.clusters, [("cluster_id", "cluster"), ("rank", "rank"), ("detector", "detector"),
                                         ("signature", "signature"), ("train_tasks", "train tasks"),
                                         ("heldout_tasks", "held-out tasks"), ("source_traces", "source traces"),
                                         ("rollouts_sampled", "rollouts sampled"),
                                         ("rollouts_trained_on", "rollouts trained on")])
    else:
        lines.append("Unknown: the store holds no tasks of this checkpoint's task set.")
    lines += ["", "## Evaluation", ""]
    lines += _eval_section(facts)
    lines += ["", "## Lineage", ""]
    lines += _lineage_section(facts)
    lines += ["", "## Files", ""] + _files_section(facts)
    return "\n".join(lines)


def _files_section(facts: CardFacts) -> list[str]:
    if facts.lora == "adapter":
        return ["- peft adapter layout: `adapter_config.json`, `adapter_model.safetensors`, tokenizer files; load "
                "with `PeftModel.from_pretrained(base, FOLDER)` over the base model, or serve with vLLM's "
                "`--enable-lora`. `base_model_name_or_path` in `adapter_config.json` names the base model's folder "
                "on the machine that trained it.",
                "- Not included: the base model's weights, the optimizer and trainer state (`trainer_state.pt`).", ""]
    weights = ("- The checkpoint is a LoRA adapter; these are the base model's weights with the adapter merged in "
               "(W + alpha/r B A). `tracegym export --adapter` writes the adapter alone." if facts.lora == "merged"
               else "- The run trained full weights, so there is no LoRA adapter to merge.")
    return ["- Hugging Face layout: `config.json`, `generation_config.json`, safetensors weights, tokenizer "
            "files; load with `AutoModelForCausalLM.from_pretrained(FOLDER)`.",
            f"- GGUF: {_fmt(facts.gguf)} (unquantized; llama.cpp and `transformers` with `gguf_file=` read it)."
            if facts.gguf else "- No GGUF file (export with `--gguf` to write one, for Llama-architecture models).",
            weights, "- Not included: the optimizer and trainer state (`trainer_state.pt`).", ""]


def _training_section(facts: CardFacts) -> list[str]:
    lines = ["## Training", ""]
    base = facts.base_model or "unknown (the run is not in the store)"
    hub = HUB_IDS.get((facts.base_model or "").lower())
    lines.append(f"- Base model: {_fmt(base)}" + (f" ({hub})" if hub else ""))
    lines.append(f"- Task set: {_fmt(facts.task_set_id)}")
    lines.append(f"- Run: {_fmt(facts.run_id)}, checkpoint at step {_fmt(facts.step)} (warm start included)"
                 + (f"; the run is {_fmt(facts.run.get('status'))}, started "
                    f"{_fmt(str(facts.run.get('started_at'))[:19])}" if facts.run else ""))
    lines.append("- Method: GRPO on tasks cut from failing production traces (tracegym), after a supervised warm "
                 "start on successful traces where the run configured one.")
    return lines


def _eval_section(facts: CardFacts) -> list[str]:
    if not facts.evaluations:
        return ["Not evaluated: no `tracegym eval` of these weights in the store."]
    columns = [("eval_id", "evaluation"), ("split", "split"), ("tasks", "tasks"), ("samples", "samples"),
               ("reward", "mean reward"), ("base_reward", "base reward"), ("pass_rate", "pass@1"),
               ("base_pass_rate", "base pass@1"), ("base", "base model")]
    lines = ["Mean over tasks of each task's mean reward (unscored samples count 0), against the base model on "
             "the same tasks and seeds.", ""]
    lines += _table(facts.evaluations, columns)
    lines += ["", "Per failure cluster:", ""]
    lines += _table(facts.cluster_evals, [("eval_id", "evaluation"), ("cluster_id", "cluster")] + columns[2:8])
    return lines


def _lineage_section(facts: CardFacts) -> list[str]:
    lines = [f"- Checkpoint: {_fmt(facts.checkpoint)}", f"- Weights: {_fmt(facts.checkpoint_id)}"]
    if facts.store is not None:
        lines.append(f"- Store: {_fmt(facts.store)}")
    lines += [f"- `tracegym lineage` {_fmt(c['cluster_id'])}: cluster → tasks → runs → evaluations"
              for c in facts.clusters if c["cluster_id"] is not None]
    return lines
