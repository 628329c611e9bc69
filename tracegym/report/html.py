"""One self-contained HTML page per run: its charts (inline base64 PNG), the per-cluster eval table, the training
reward and hollow replies per failure cluster (charts and table) with the run's warnings of possible reward hacking,
its sampler pools' quarantines and rollout cost, its config.

Nothing is fetched when the page opens (no scripts, fonts or stylesheets from elsewhere), so it can be
mailed, attached to a ticket or opened from a file share.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2

from tracegym.report.cluster_chart import TABLE_STEPS, cluster_table
from tracegym.report.plots import build_charts, png_bytes
from tracegym.report.rundata import RunData

_TEMPLATES = Path(__file__).parent / "templates"


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = lambda v, digits=3: "–" if v is None else f"{v:.{digits}f}"
    env.filters["signed"] = lambda v: "–" if v is None else f"{v:+.3f}"
    return env


def _change_class(change: dict[str, Any] | None) -> str:
    if not change or not change["beyond_noise"]:
        return "noise"
    return "up" if change["diff"] > 0 else "down"


def _headline(data: RunData) -> list[tuple[str, str]]:
    run, config = data.run, data.run["config"]
    warm = (config.get("warmup") or {}).get("steps", 0)
    items = [("status", str(run["status"])), ("base model", str(run["base_model"])),
             ("task set", str(run["task_set_id"])), ("steps", f"{data.last_step() or 0} ({warm} warm start)"),
             ("checkpoints", str(len(data.checkpoints))), ("started", str(run["started_at"])[:19]),
             ("updated", str(run["updated_at"])[:19])]
    if data.hack_warnings:
        clusters = ", ".join(dict.fromkeys(w["cluster_id"] for w in data.hack_warnings))
        items.append(("possible reward hacking", f"in {clusters}: reward rose while replies turned hollow (see "
                                                 "Training reward per failure cluster)"))
    grpo, idle = data.grpo_steps()
    if idle:
        items.append(("trained nothing", f"{len(idle)} of {len(grpo)} GRPO steps: every group's rewards were equal, "
                                         "so there was no advantage to learn from (✕ on the reward chart)"))
    if data.comparison is not None:
        base, *checkpoints = data.comparison["groups"][0]["rows"]
        latest = max(checkpoints, key=lambda row: row["step"] or 0, default=None)
        change = latest["change"]["reward"] if latest is not None else None
        if latest is not None and change is not None:
            verdict = "beyond noise" if change["beyond_noise"] else "within noise"
            text = (f"{base['reward']['value']:.3f} → {latest['reward']['value']:.3f} at step {latest['step']} "
                    f"({change['diff']:+.3f}, {verdict})")
            items.append(("held-out reward", text))
    return items


def render_report(data: RunData) -> str:
    """The page as a string."""
    charts, missing = build_charts(data)
    images = [{"title": c.title, "name": c.name, "wide": len(c.figure.axes) > 1,
               "src": "data:image/png;base64," + base64.b64encode(png_bytes(c.figure)).decode()} for c in charts]
    # The per-cluster charts stand beside their table rather than among the other charts.
    cluster_chart = next((image for image in images if image["name"] == "clusters"), None)
    replies_chart = next((image for image in images if image["name"] == "replies"), None)
    cluster_rows = cluster_table(data)
    template = _env().get_template("report.html.j2")
    return template.render(
        run=data.run, headline=_headline(data),
        charts=[i for i in images if i is not cluster_chart and i is not replies_chart], missing=missing,
        comparison=data.comparison, cluster_chart=cluster_chart, replies_chart=replies_chart,
        cluster_rows=cluster_rows, hack_warnings=data.hack_warnings,
        curriculum=any(r["draw_weight"] is not None for r in cluster_rows), table_steps=TABLE_STEPS,
        change_class=_change_class, config_json=json.dumps(data.run["config"], indent=2, default=str),
        generated=datetime.now().isoformat(timespec="seconds"), checkpoints=data.checkpoints,
        quarantines=data.quarantines, cost=data.cost(),
    )


def write_report(data: RunData, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(data), encoding="utf-8")
    return path
