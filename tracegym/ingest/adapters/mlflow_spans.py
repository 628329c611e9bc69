"""MLflow 3 spans: what one span says, read from MLflow's own `mlflow.*` attributes.

Schema: mlflow/mlflow `mlflow/tracing/constant.py` (SpanAttributeKey) and `mlflow/entities/span.py`. Every
attribute value is JSON text (`mlflow.spanType` is `"\\"CHAT_MODEL\\""`). The same attributes arrive in a trace's
JSON (`Trace.to_json()`, read by `mlflow.py`) and in MLflow's default OTLP export (read by `otel_genai.py`).

- `mlflow.spanType` CHAT_MODEL or LLM: an LLM call. `mlflow.spanInputs` is the request (OpenAI `messages`,
  Anthropic `system` + `messages`, a LangChain message list, or a prompt), `mlflow.spanOutputs` the reply (a chat
  completion's `choices`, a message, or text). Tokens: `mlflow.chat.tokenUsage` (`input_tokens`,
  `output_tokens`), else the reply's `usage`. Model: the reply's `model`, else `mlflow.llm.model`. Tools offered:
  `mlflow.chat.tools`.
- TOOL: a tool execution; its name is the span's name, its arguments `mlflow.spanInputs`, its result
  `mlflow.spanOutputs`. MLflow records no call id: it is matched to the assistant's call of the same name.
- Errors: status ERROR or an `exception` event (what `otlp.span_error` reads).
"""

from __future__ import annotations

from typing import Any

import orjson

from tracegym import exact_json
from tracegym.ingest.adapters import otlp
from tracegym.ingest.adapters.span_messages import Turn, as_text, io_turns, message_turns
from tracegym.ingest.adapters.spans import LlmCall, SpanFacts, ToolRun
from tracegym.ingest.normalize import opt_int

SPAN_TYPE = "mlflow.spanType"
LLM_TYPES = {"CHAT_MODEL", "LLM"}


def is_mlflow_span(attrs: dict[str, Any]) -> bool:
    return SPAN_TYPE in attrs


def attr(attrs: dict[str, Any], key: str) -> Any:
    """An `mlflow.*` attribute's value: MLflow writes JSON text; anything else is taken as it is."""
    value = attrs.get(key)
    if not isinstance(value, str):
        return value
    try:
        return exact_json.loads(value)
    except orjson.JSONDecodeError:
        return value


def span_facts(span: otlp.OtlpSpan) -> SpanFacts:
    a = span.attrs
    kind = attr(a, SPAN_TYPE)
    facts = SpanFacts(span.name, span.start, span.end, order=span.span_id, error=otlp.span_error(span))
    if isinstance(span.resource.get("service.name"), str):
        facts.info["service"] = span.resource["service.name"]
    if kind in LLM_TYPES:
        facts.kind = "llm"
        facts.call = _llm_call(a)
        tools = attr(a, "mlflow.chat.tools")
        facts.tools = tools if isinstance(tools, list) else None
    elif kind == "TOOL":
        facts.kind = "tool"
        result = as_text(attr(a, "mlflow.spanOutputs"))
        facts.tool = ToolRun(name=span.name, call_id=None, arguments=_arguments(attr(a, "mlflow.spanInputs")),
                             result=result if result is not None else facts.error, is_error=facts.error is not None)
    return facts


def _arguments(inputs: Any) -> Any:
    return inputs if isinstance(inputs, dict) else {} if inputs is None else {"input": inputs}


def _llm_call(a: dict[str, Any]) -> LlmCall:
    inputs, outputs = attr(a, "mlflow.spanInputs"), attr(a, "mlflow.spanOutputs")
    usage = attr(a, "mlflow.chat.tokenUsage")
    usage = usage if isinstance(usage, dict) else {}
    reply_usage = outputs.get("usage") if isinstance(outputs, dict) and isinstance(outputs.get("usage"), dict) else {}
    model = outputs.get("model") if isinstance(outputs, dict) else None
    return LlmCall(
        inputs=_input_turns(inputs),
        outputs=io_turns(outputs, "assistant")[:1] if outputs is not None else [],
        input_tokens=opt_int(usage.get("input_tokens", reply_usage.get("prompt_tokens",
                                                                       reply_usage.get("input_tokens")))),
        output_tokens=opt_int(usage.get("output_tokens", reply_usage.get("completion_tokens",
                                                                         reply_usage.get("output_tokens")))),
        model=str(model or attr(a, "mlflow.llm.model") or "") or None,
    )


def _input_turns(inputs: Any) -> list[Turn]:
    """The request: its messages (after Anthropic's top-level `system`), a prompt, or the inputs as text."""
    if isinstance(inputs, dict) and isinstance(inputs.get("messages"), list):
        system = inputs.get("system")
        head = io_turns(system, "system") if system is not None else []
        return head + message_turns(inputs["messages"], "user")
    if isinstance(inputs, dict) and isinstance(inputs.get("prompt"), (str, list)):
        return io_turns(inputs["prompt"], "user")
    return io_turns(inputs, "user")


def name_tool_runs(facts: list[SpanFacts]) -> None:
    """Name the tool spans no call is named after. MLflow names a tool span after the traced function
    (`get_weather_tool`), which need not be the tool's name in the model's call (`get_weather`): such a span
    takes the id and name of the call whose result, as a later request sent it back, is the span's output. Read
    for MLflow's trace JSON and for OTLP spans (its default attributes and its semantic-convention ones alike)."""
    runs = [f.tool for f in sorted(facts, key=lambda f: (f.start is None, f.start, f.order)) if f.tool]
    calls = [c for f in facts if f.call for o in f.call.outputs for c in o.tool_calls if c.id]
    answers = {t.tool_call_id: t.content for f in facts if f.call for t in f.call.inputs
               if t.role == "tool" and t.tool_call_id}
    named = {run.name for run in runs}
    open_calls = [c for c in calls if c.name not in named]  # calls no span is named after
    for run in runs:
        if run.call_id is not None or any(c.name == run.name for c in calls):
            continue
        hit = next((c for c in open_calls if _same_result(answers.get(c.id), run.result)), None)
        if hit is not None:
            open_calls.remove(hit)
            run.name, run.call_id = hit.name, hit.id


def _same_result(sent: str | None, recorded: str | None) -> bool:
    """The result the model was sent and the one the span recorded: alike, or the span's is the JSON of the other
    (MLflow's GenAI semantic-convention spans write `gen_ai.tool.call.result` as JSON)."""
    if sent is None or recorded is None:
        return False
    return sent == recorded or sent == attr({"result": recorded}, "result")
