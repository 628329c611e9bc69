"""`tracegym ingest mlflow+http://HOST:PORT --experiment NAME`: traces pulled from a running MLflow tracking server.

Through MLflow 3's REST API: the experiment's id (`GET /api/2.0/mlflow/experiments/get-by-name`), its traces'
infos page by page (`POST /api/3.0/mlflow/traces/search`, with `trace.timestamp_ms > …` for `--since`), and the
spans of each trace to fetch (`GET /ajax-api/3.0/mlflow/get-trace-artifact`, the `{"spans": [...]}` document
`Trace.to_json()` holds). Each pulled trace is `{"info", "data"}`, as `Trace.to_json()` writes it; the pull is one
file of them, ingested by the `mlflow` adapter in one transaction.

Incremental and idempotent: `mlflow_pulls` remembers, per server and experiment, each trace pulled and a digest of
its info (state, tags, assessments); the next pull fetches only traces that are new or whose info changed (new
feedback, say), and a changed trace replaces the stored one. Traces still in progress are left for a later pull.
A token in MLFLOW_TRACKING_TOKEN, or MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, is sent as MLflow's
own client sends it.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from tracegym import exact_json
from tracegym.errors import IngestError
from tracegym.ingest.adapters import get_adapter
from tracegym.ingest.pipeline import IngestSummary, ingest_fetched
from tracegym.store import Store

if TYPE_CHECKING:
    from tracegym.redact.session import Run

PREFIX = re.compile(r"^mlflow\+(https?)://", re.I)
PAGE = 100
TIMEOUT_S = 60.0
_SINCE = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def is_mlflow_source(text: str) -> bool:
    return bool(PREFIX.match(text))


def server_url(source: str) -> str:
    """`mlflow+http://host:5000/prefix` -> `http://host:5000/prefix`."""
    url = PREFIX.sub(lambda m: f"{m.group(1).lower()}://", source.strip()).rstrip("/")
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname or parts.query or parts.fragment:
        raise IngestError(f"{source!r} is not an MLflow server address. Fix: give it as mlflow+http://HOST:PORT.")
    return url


def parse_since(text: str | None) -> timedelta | None:
    """'30m', '12h', '1d', '2w' as a time span."""
    if text is None:
        return None
    m = _SINCE.match(text.strip().lower())
    if not m or int(m.group(1)) == 0:
        raise IngestError(f"--since {text!r} is not a time span. Fix: a number and a unit m, h, d or w, as 1d.")
    return timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})


@dataclass
class Plan:
    """What a pull will fetch: the traces that are new or changed since the last pull."""

    server: str
    experiment: str
    experiment_id: str
    todo: list[dict[str, Any]] = field(default_factory=list)
    listed: int = 0
    unchanged: int = 0
    in_progress: int = 0


def plan_pull(store: Store, source: str, experiment: str, since: timedelta | None) -> Plan:
    server = server_url(source)
    found = _call(server, "GET", "/api/2.0/mlflow/experiments/get-by-name",
                  query={"experiment_name": experiment}, missing=f"No experiment named {experiment!r} on {server}. "
                  "Fix: name one the server has (its UI lists them), as given to mlflow.set_experiment.")
    exp_id = str((found.get("experiment") or {}).get("experiment_id") or "")
    if not exp_id:
        raise IngestError(f"{server} answered without an experiment id for {experiment!r}.")
    plan = Plan(server, experiment, exp_id)
    known = dict(store.con.execute("SELECT mlflow_trace_id, fingerprint FROM mlflow_pulls WHERE server = ? AND "
                                   "experiment = ?", [server, experiment]).fetchall())
    for info in _search(server, exp_id, since):
        plan.listed += 1
        if info.get("state") == "IN_PROGRESS":
            plan.in_progress += 1
        elif known.get(str(info.get("trace_id"))) == fingerprint(info):
            plan.unchanged += 1
        else:
            plan.todo.append(info)
    return plan


def fingerprint(info: dict[str, Any]) -> str:
    return hashlib.sha256(exact_json.dumps(info).encode()).hexdigest()[:32]


def _search(server: str, exp_id: str, since: timedelta | None) -> Iterator[dict[str, Any]]:
    body: dict[str, Any] = {"locations": [{"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {
        "experiment_id": exp_id}}], "max_results": PAGE, "order_by": ["timestamp_ms ASC"]}
    if since is not None:
        start = datetime.now(UTC) - since
        body["filter"] = f"trace.timestamp_ms > {int(start.timestamp() * 1000)}"
    while True:
        page = _call(server, "POST", "/api/3.0/mlflow/traces/search", body=body)
        traces = page.get("traces") or []
        if not isinstance(traces, list):
            raise IngestError(f"{server} answered a trace search without a list of traces.")
        yield from (t for t in traces if isinstance(t, dict) and isinstance(t.get("trace_id"), str))
        token = page.get("next_page_token")
        if not token:
            return
        body["page_token"] = token


def fetch(plan: Plan, folder: Path, advance: Callable[[int], None]) -> Path:
    """The spans of every trace to pull, each written beside its info as one line of a file in `folder`."""
    path = folder / "pull.jsonl"
    with path.open("wb") as f:
        for info in plan.todo:
            spans = _call(plan.server, "GET", "/ajax-api/3.0/mlflow/get-trace-artifact",
                          query={"request_id": info["trace_id"]},
                          missing=f"{plan.server} has no spans for trace {info['trace_id']}.")
            f.write(orjson.dumps({"info": info, "data": spans}) + b"\n")
            advance(1)
    return path


def remember(store: Store, plan: Plan, source_id: str) -> None:
    """Record the traces of a pull that was stored."""
    now = datetime.now(UTC).replace(tzinfo=None)
    with store.transaction() as con:
        for info in plan.todo:
            con.execute("INSERT OR REPLACE INTO mlflow_pulls VALUES (?, ?, ?, ?, ?, ?)",
                        [plan.server, plan.experiment, info["trace_id"], fingerprint(info), source_id, now])


def pull(store: Store, plan: Plan, advance: Callable[[int], None], redact: Run | None = None) -> IngestSummary:
    """Fetch the plan's traces and store them in one transaction (changed ones replace the stored ones); then
    remember them. Nothing is stored when a fetch fails."""
    if not plan.todo:
        return IngestSummary()
    with tempfile.TemporaryDirectory(prefix="tracegym-mlflow-") as folder:
        path = fetch(plan, Path(folder), advance)
        summary, source_id = ingest_fetched(store, path, get_adapter("mlflow"),
                                            f"{plan.server} experiment {plan.experiment}", redact)
    if any(f.status in ("loaded", "already ingested") for f in summary.files):
        remember(store, plan, source_id)
    return summary


def _call(server: str, method: str, path: str, query: dict[str, str] | None = None,
          body: dict[str, Any] | None = None, missing: str | None = None) -> dict[str, Any]:
    url = server + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
    data = orjson.dumps(body) if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=_headers(data is not None))
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310 - http(s) checked above
            raw = response.read()
    except urllib.error.HTTPError as e:
        if e.code == 404 and missing:
            raise IngestError(missing) from None
        detail = e.read(2000).decode("utf-8", "replace")
        raise IngestError(f"{server} answered {method} {path} with HTTP {e.code}: {detail!r}. Fix: check the "
                          "address is an MLflow 3 tracking server and the credentials (MLFLOW_TRACKING_TOKEN).") \
            from None
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise IngestError(f"Could not reach the MLflow server at {server}: {reason}. Fix: start it (`mlflow "
                          "server`) or correct the address; nothing was stored.") from None
    try:
        value = exact_json.loads(raw)
    except orjson.JSONDecodeError:
        raise IngestError(f"{server} answered {method} {path} with something that is not JSON: is it an MLflow "
                          "tracking server?") from None
    if not isinstance(value, dict):
        raise IngestError(f"{server} answered {method} {path} with JSON that is not an object.")
    return value


def _headers(has_body: bool) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    if has_body:
        headers["Content-Type"] = "application/json"
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    elif user and password:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    return headers
