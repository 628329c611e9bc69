"""The redaction report: counts per detector, per column and per trace, with examples shown masked."""

from __future__ import annotations

from typing import Any

from tracegym.redact.session import Run

TOP_TRACES = 20


def report(run: Run, top_traces: int | None = TOP_TRACES) -> dict[str, Any]:
    """What a run found, as data (`--json`, `--report FILE`); `top_traces` None lists every trace."""
    tally = run.redactor.tally
    rules = {r.name: r for r in run.redactor.detector.rules}
    traces = tally.by_trace.most_common(top_traces)
    return {
        "redaction_id": run.redaction_id,
        "how": run.how,
        "findings": tally.total,
        "traces_with_findings": len(tally.by_trace),
        "by_rule": [{"rule": name, "label": rules[name].label, "findings": n,
                     "examples": tally.examples.get(name, [])} for name, n in tally.by_rule.most_common()],
        "by_column": dict(tally.by_column.most_common()),
        "by_trace": [{"trace_id": t, "findings": n} for t, n in traces],
    }
