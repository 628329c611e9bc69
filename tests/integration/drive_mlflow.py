"""Run a small tool-using agent under MLflow 3's tracing (`mlflow.openai.autolog` and `@mlflow.trace`) and
write what MLflow keeps of it.

`python -m tests.integration.drive_mlflow MODE OUT [TRACKING_URI]`, in a process of its own (autolog patches
the openai client). Two conversations against the scripted model of `fake_model_server`: Paris, whose tool
answers, scored `task_success` true by a person; and Atlantis, whose tool raises (the agent sends the error back
to the model), scored false by a judge with a rationale. MODE:

- `json`: tracked in a file store under OUT/mlruns (its trace folders), and exported as `Trace.to_json()` lines
  (OUT/traces.jsonl) and as `mlflow.search_traces()`'s DataFrame (OUT/search.json).
- `otlp`, `semconv`: MLflow's OTLP exporter (default attributes, or `MLFLOW_ENABLE_OTEL_GENAI_SEMCONV`) to a
  collector on 127.0.0.1 that writes each request as OTLP/JSON, one per line (OUT/spans.jsonl).
- `server`: tracked by the MLflow server at TRACKING_URI, experiment `weather`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.integration.drive_producers import SYSTEM, TOOLS, fake_service, get_weather
from tests.integration.fake_model_server import fake_openai

QUESTIONS = ("Weather in Paris?", "Weather in Atlantis?")
TOOL_ERROR = "ValueError: no weather station in Atlantis"


def weather(city: str) -> str:
    if city == "Atlantis":
        raise ValueError("no weather station in Atlantis")
    return get_weather(city)


def conversation(client: Any, question: str, tool: Any) -> str:
    """Ask, run the tool the model calls (a failure goes back to the model as the result), ask again."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    while True:
        reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS).choices[0].message
        if not reply.tool_calls:
            return str(reply.content)
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls:
            try:
                result = tool(**json.loads(call.function.arguments))
            except ValueError as e:
                result = f"{type(e).__name__}: {e}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def run_agent() -> list[str]:
    """Both conversations, each a trace, scored; returns their trace ids."""
    import mlflow
    import openai
    from mlflow.entities import AssessmentSource

    mlflow.openai.autolog()
    tool = mlflow.trace(weather, span_type="TOOL")  # its span is named `weather`, the model's call `get_weather`
    ids = []
    with fake_openai() as url:
        client = openai.OpenAI(base_url=url, api_key="test")
        for question in QUESTIONS:
            mlflow.trace(conversation, name="weather_agent", span_type="AGENT")(client, question, tool)
            ids.append(mlflow.get_last_active_trace_id())
    if os.environ.get("MLFLOW_TRACKING_URI") or mlflow.get_tracking_uri().startswith(("file:", "http")):
        mlflow.flush_trace_async_logging()
        mlflow.log_feedback(trace_id=ids[0], name="task_success", value=True,
                            source=AssessmentSource(source_type="HUMAN", source_id="reviewer"))
        mlflow.log_feedback(trace_id=ids[1], name="task_success", value=False, rationale="no forecast given",
                            source=AssessmentSource(source_type="LLM_JUDGE", source_id="judge"))
    return ids


def json_exports(out: Path) -> None:
    import mlflow

    mlflow.set_tracking_uri((out / "mlruns").as_uri())
    mlflow.set_experiment("weather")
    ids = run_agent()
    traces = [mlflow.get_trace(i) for i in ids]
    (out / "traces.jsonl").write_text("".join(t.to_json() + "\n" for t in traces))
    (out / "search.json").write_text(mlflow.search_traces().to_json(orient="records"))


def otlp(out: Path, semconv: bool) -> None:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    lines: list[str] = []

    def on_post(path: str, headers: dict[str, str], body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        lines.append(json.dumps(MessageToDict(request)) + "\n")

    with fake_service(on_post) as url:
        os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"{url}/v1/traces"
        os.environ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
        if semconv:
            os.environ["MLFLOW_ENABLE_OTEL_GENAI_SEMCONV"] = "true"
        run_agent()
        from mlflow.tracing.provider import provider

        provider.get().force_flush()  # the exporter batches: send what it holds before the collector stops
    (out / "spans.jsonl").write_text("".join(lines))


def main() -> None:
    mode, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    # MLflow prices each call with litellm where it is installed, whose import takes seconds and fetches a price
    # list from the network; without it MLflow uses its own table, as it does where litellm is not installed.
    sys.modules["litellm"] = None  # type: ignore[assignment]
    os.environ.setdefault("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    if mode == "json":
        os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
        json_exports(out)
    elif mode in ("otlp", "semconv"):
        otlp(out, mode == "semconv")
    elif mode == "server":
        import mlflow

        mlflow.set_tracking_uri(sys.argv[3])
        mlflow.set_experiment("weather")
        (out / "ids.json").write_text(json.dumps(run_agent()))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
