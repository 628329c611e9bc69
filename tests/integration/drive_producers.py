"""Run a small tool-using agent under a real telemetry library and write what it exports to files.

`python -m tests.integration.drive_producers PRODUCER OUT_DIR [CAPTURE]`, run in a process of its own per
producer (the instrumentations patch the openai client for the whole process). The model is the scripted
server of `fake_model_server`; Langfuse and LangSmith post to a fake of their service on 127.0.0.1, which
writes what they sent as their exports hold it.
"""

from __future__ import annotations

import email.parser
import email.policy
import gzip
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.integration.fake_model_server import ORDER_RESULT, fake_openai, refund_chat

SYSTEM = "You answer weather questions with the get_weather tool."
QUESTION = "Weather in Paris?"
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


WEATHER = {"Paris": "18C and sunny", "Rome": "24C and clear", "Oslo": "3C and snowing", "Lima": "20C and cloudy",
           "Tokyo": "15C and raining"}
# The conversations the call loggers drive, interleaved call by call: (questions asked one after the other).
CONVERSATIONS = [("Weather in Paris?", "And in Rome?"), ("Weather in Oslo?", "And in Lima?"), ("Weather in Tokyo?",)]


REFUND_SYSTEM = "You handle refund requests with the lookup_order and issue_refund tools."
REFUND_QUESTION = "Please refund order A-17."
REFUND_TOOLS = [
    {"type": "function", "function": {"name": "lookup_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "issue_refund", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}}}}}]
REFUND_ERROR = '{"error": {"code": 504, "message": "upstream timeout"}}'  # the refund backend's answer


@dataclass(frozen=True)
class Task:
    """What the agent is asked, with which tools, and the model's script for it (`fake_model_server`)."""

    system: str
    question: str
    tools: list[dict[str, Any]]
    script: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None  # None: the server's weather script


WEATHER_TASK = Task(SYSTEM, QUESTION, TOOLS)
REFUND_TASK = Task(REFUND_SYSTEM, REFUND_QUESTION, REFUND_TOOLS, refund_chat)


class ToolFailed(Exception):
    """A tool whose backend answered with an error; the agent sends the answer back to the model as the result."""


def get_weather(city: str) -> str:
    return WEATHER.get(city, "unknown city")


def refund_tool(_id: str, name: str, args: dict[str, Any]) -> str:
    """The refund task's tools: the order is found, the refund backend times out."""
    if name == "issue_refund":
        raise ToolFailed(REFUND_ERROR)
    return ORDER_RESULT


def weather_tool(_id: str, _name: str, args: dict[str, Any]) -> str:
    return get_weather(**args)


def agent(client: Any, run_tool: Callable[[str, str, dict[str, Any]], str], tool_name: bool = False,
          task: Task = WEATHER_TASK) -> str:
    """The agent loop: ask, run the tool the model calls, ask again with its result, or with the error of a tool
    that failed (`tool_name`: the tool message names its tool)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": task.system},
                                      {"role": "user", "content": task.question}]
    while True:
        reply = client.chat.completions.create(model="gpt-test", messages=messages,
                                               tools=task.tools).choices[0].message
        if not reply.tool_calls:
            return reply.content
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls:
            try:
                result = run_tool(call.id, call.function.name, json.loads(call.function.arguments))
            except ToolFailed as failed:
                result = str(failed)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result,
                             **({"name": call.function.name} if tool_name else {})})


def _otlp_json(message: Any) -> str:
    from google.protobuf.json_format import MessageToDict

    return json.dumps(MessageToDict(message))


def otel(out: Path, capture: str) -> None:
    """opentelemetry-instrumentation-openai-v2; spans and log records to two files, as a Collector's file
    exporter writes them (one export request per line)."""
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = capture
    import openai
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans, logs = InMemorySpanExporter(), InMemoryLogExporter()
    tracer_provider, logger_provider = TracerProvider(), LoggerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    tracer = tracer_provider.get_tracer("weather-agent")
    evaluations = logger_provider.get_logger("weather-agent")

    def run_tool(call_id: str, name: str, args: dict[str, Any]) -> str:
        with tracer.start_as_current_span(f"execute_tool {name}") as span:
            result = get_weather(**args)
            span.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                                 "gen_ai.tool.call.id": call_id})
            return result

    with fake_openai() as url, tracer.start_as_current_span("invoke_agent weather") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent(openai.OpenAI(base_url=url, api_key="test"), run_tool)
        from opentelemetry._logs import LogRecord

        evaluations.emit(LogRecord(event_name="gen_ai.evaluation.result", attributes={
            "gen_ai.evaluation.name": "task_success", "gen_ai.evaluation.score.value": 1.0}))
    (out / "spans.jsonl").write_text("".join(_otlp_json(encode_spans([s])) + "\n" for s in spans.get_finished_spans()))
    (out / "logs.jsonl").write_text("".join(_otlp_json(encode_logs([r])) + "\n" for r in logs.get_finished_logs()))


def openllmetry(out: Path, capture: str) -> None:
    """opentelemetry-instrumentation-openai (Traceloop's OpenLLMetry) at its last version to record content as
    indexed attributes (`gen_ai.prompt.N.*`, `gen_ai.completion.N.*`, `llm.request.functions.N.*`); spans to one
    file, a line per span. CAPTURE `no_parent`: a plain loop with no span around it (a trace per call);
    `conversations`: the interleaved conversations of `CONVERSATIONS`, no span around them either; `refund`: the
    refund task, whose issue_refund fails, in a workflow span."""
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
    import openai
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(spans))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("weather-agent")
    task = REFUND_TASK if capture == "refund" else WEATHER_TASK
    with fake_openai(chat=task.script) as url:
        client = openai.OpenAI(base_url=url, api_key="test")
        if capture == "conversations":
            _interleaved([_chat_conversation(client, q) for q in CONVERSATIONS])
        elif capture == "no_parent":
            agent(client, weather_tool)
        else:
            with tracer.start_as_current_span("agent.workflow"):
                agent(client, refund_tool if task is REFUND_TASK else weather_tool, task=task)
    (out / "spans.jsonl").write_text("".join(_otlp_json(encode_spans([s])) + "\n" for s in spans.get_finished_spans()))


def _openlit_input(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """openlit 1.45's `build_input_messages` (openlit/instrumentation/openai/utils.py) for string contents: a
    message without text is left out (an assistant turn of tool calls only), `tool_calls` are never read, a
    tool message is one `tool_call_response` part, and `name` is kept."""
    out = []
    for m in messages:
        parts = [{"type": "text", "content": m["content"]}] if isinstance(m.get("content"), str) and m["content"] \
            else []
        if m["role"] == "tool":
            parts = [{"type": "tool_call_response", "id": m.get("tool_call_id", ""), "response": m["content"]}]
        if parts:
            out.append({"role": m["role"], "parts": parts, **({"name": m["name"]} if m.get("name") else {})})
    return out


def _openlit_output(reply: Any, finish: str) -> list[dict[str, Any]]:
    """openlit 1.45's `build_output_messages`: text, then the calls with their arguments parsed."""
    parts: list[dict[str, Any]] = [{"type": "text", "content": reply.content}] if reply.content else []
    parts += [{"type": "tool_call", "id": c.id, "name": c.function.name, "arguments": json.loads(c.function.arguments)}
              for c in reply.tool_calls or []]
    return [{"role": "assistant", "parts": parts, "finish_reason": {"tool_calls": "tool_call"}.get(finish, finish)}]


def openlit(out: Path, capture: str) -> None:
    """The span layout of openlit 1.45's OpenAI chat instrumentation (openlit/instrumentation/openai/openai.py,
    utils.py `common_chat_logic`, __helpers.py `common_span_attributes`) and of its `@openlit.trace` function
    spans (openlit/__init__.py `trace`), written with the real OTel SDK around real openai calls: openlit itself
    does not install beside this project's openai (it requires openai<3). The model says a few words beside its
    tool call, and tool messages carry the tool's name. CAPTURE `no_parent`: no function span around the loop,
    as in openlit's quickstart (a trace per call); `conversations`: the interleaved conversations of
    `CONVERSATIONS`, no span around them either; `refund`: the refund task, whose issue_refund fails."""
    import openai
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind, Status, StatusCode

    from tests.integration.fake_model_server import CHECKING, _chat

    spans = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent",
                                                        "deployment.environment": "default"}))
    provider.add_span_processor(SimpleSpanProcessor(spans))
    tracer = provider.get_tracer("openlit.otel.tracing")

    def chat(client: Any, **kwargs: Any) -> Any:
        with tracer.start_as_current_span(f"chat {kwargs['model']}", kind=SpanKind.CLIENT) as span:
            response = client.chat.completions.create(**kwargs)
            choice = response.choices[0]
            calls = choice.message.tool_calls or []
            span.set_attributes({
                "telemetry.sdk.name": "openlit", "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                "gen_ai.request.model": kwargs["model"], "gen_ai.response.model": response.model,
                "deployment.environment": "default", "service.name": "weather-agent",
                "gen_ai.response.id": response.id, "gen_ai.response.finish_reasons": [choice.finish_reason],
                "gen_ai.usage.input_tokens": response.usage.prompt_tokens,
                "gen_ai.usage.output_tokens": response.usage.completion_tokens,
                "gen_ai.input.messages": json.dumps(_openlit_input(kwargs["messages"])),
                "gen_ai.output.messages": json.dumps(_openlit_output(choice.message, choice.finish_reason)),
                "gen_ai.system_instructions": json.dumps(
                    [{"type": "text", "content": m["content"]} for m in kwargs["messages"] if m["role"] == "system"])})
            if calls:
                span.set_attributes({"gen_ai.tool.name": ", ".join(c.function.name for c in calls),
                                     "gen_ai.tool.call.id": ", ".join(c.id for c in calls),
                                     "gen_ai.tool.args": ", ".join(c.function.arguments for c in calls)})
            span.set_status(Status(StatusCode.OK))
            return response

    class Client:  # what the agent loop calls: chat.completions.create, through openlit's wrapper
        def __init__(self, inner: Any) -> None:
            self.chat = self
            self.completions = self
            self.inner = inner

        def create(self, **kwargs: Any) -> Any:
            return chat(self.inner, **kwargs)

    task = REFUND_TASK if capture == "refund" else WEATHER_TASK

    def script(n: int, body: dict[str, Any]) -> dict[str, Any]:
        reply = (task.script or _chat)(n, body)
        message = reply["choices"][0]["message"]
        if message.get("tool_calls"):
            message["content"] = CHECKING
        return reply

    run_tool = refund_tool if task is REFUND_TASK else weather_tool

    def run_agent(client: Any) -> str:  # `@openlit.trace`: a span named after the function, its return value
        with tracer.start_as_current_span("run_agent", kind=SpanKind.CLIENT) as span:
            answer = agent(client, run_tool, tool_name=True, task=task)
            span.set_attributes({"gen_ai.output.messages": answer, "function.args": str((client,)),
                                 "function.kwargs": "{}", "service.name": "weather-agent",
                                 "deployment.environment": "default"})
            span.set_status(Status(StatusCode.OK))
            return answer

    with fake_openai(chat=script) as url:
        client = Client(openai.OpenAI(base_url=url, api_key="test"))
        if capture == "conversations":
            _interleaved([_chat_conversation(client, q) for q in CONVERSATIONS])
        elif capture == "no_parent":
            agent(client, run_tool, tool_name=True)
        else:
            run_agent(client)
    (out / "spans.jsonl").write_text("".join(_otlp_json(encode_spans([s])) + "\n" for s in spans.get_finished_spans()))


def responses_agent(client: Any, run_tool: Callable[[str, str, dict[str, Any]], str]) -> str:
    """The agent loop on the Responses API: each reply's output items (text and calls) go back as input."""
    tools = [{"type": "function", "name": "get_weather", "parameters": TOOLS[0]["function"]["parameters"]}]
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    while True:
        reply = client.responses.create(model="gpt-test", instructions=SYSTEM, input=items, tools=tools)
        items += [item.model_dump(exclude_none=True) for item in reply.output]
        calls = [item for item in reply.output if item.type == "function_call"]
        if not calls:
            return reply.output_text
        items += [{"type": "function_call_output", "call_id": c.call_id,
                   "output": run_tool(c.call_id, c.name, json.loads(c.arguments))} for c in calls]


def openinference(out: Path, capture: str) -> None:
    """openinference-instrumentation-openai, spans to one file; CAPTURE `responses` drives the Responses API."""
    import openai
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("weather-agent")

    def run_tool(call_id: str, name: str, args: dict[str, Any]) -> str:
        with tracer.start_as_current_span(name, attributes={
                "openinference.span.kind": "TOOL", "tool.name": name, "tool_call.id": call_id,
                "input.value": json.dumps(args)}) as span:
            result = get_weather(**args)
            span.set_attribute("output.value", result)
            return result

    with fake_openai() as url, tracer.start_as_current_span("agent", attributes={"openinference.span.kind": "AGENT"}):
        (responses_agent if capture == "responses" else agent)(openai.OpenAI(base_url=url, api_key="test"), run_tool)
    (out / "spans.jsonl").write_text(_otlp_json(encode_spans(spans.get_finished_spans())) + "\n")


def openai_agents(out: Path, capture: str) -> None:
    """The openai-agents SDK (Responses API, its default) traced by openinference-instrumentation-openai-agents,
    which turns the SDK's own spans into OpenInference spans (and replaces the SDK's exporter to OpenAI)."""
    import openai
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)

    @function_tool(name_override="get_weather")
    def weather_tool(city: str) -> str:
        return get_weather(city)

    with fake_openai() as url:
        model = OpenAIResponsesModel("gpt-test", openai.AsyncOpenAI(base_url=url, api_key="test"))
        agent = Agent(name="weather-agent", instructions=SYSTEM, tools=[weather_tool], model=model)
        Runner.run_sync(agent, QUESTION)
    (out / "spans.jsonl").write_text("".join(_otlp_json(encode_spans([s])) + "\n" for s in spans.get_finished_spans()))


def _call_logger(sdk: Any, lines: list[str]) -> Any:
    """The SDK's own HTTP client, logging each API call as one JSONL line `{request, response}` as API
    loggers do."""

    def log(response: Any) -> None:
        response.read()
        lines.append(json.dumps({"request": json.loads(response.request.content), "response": response.json()}))

    return sdk.DefaultHttpxClient(event_hooks={"response": [log]})


def _chat_conversation(client: Any, questions: tuple[str, ...]) -> Iterator[None]:
    """A multi-turn tool-using chat; yields after each API call."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for question in questions:
        messages.append({"role": "user", "content": question})
        while True:
            reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS).choices[0].message
            yield
            messages.append(reply.model_dump(exclude_none=True))
            if not reply.tool_calls:
                break
            messages += [{"role": "tool", "tool_call_id": c.id,
                          "content": get_weather(**json.loads(c.function.arguments))} for c in reply.tool_calls]


def _anthropic_conversation(client: Any, questions: tuple[str, ...]) -> Iterator[None]:
    """The same with Anthropic Messages: tool_use blocks, answered by tool_result blocks in a user turn."""
    tools = [{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}]
    messages: list[dict[str, Any]] = []
    for question in questions:
        messages.append({"role": "user", "content": question})
        while True:
            reply = client.messages.create(model="claude-test", max_tokens=256, system=SYSTEM, messages=messages,
                                           tools=tools)
            yield
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
            uses = [b for b in reply.content if b.type == "tool_use"]
            if not uses:
                break
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": b.id, "content": get_weather(**b.input)} for b in uses]})


def _interleaved(conversations: list[Iterator[None]]) -> None:
    """Step the conversations one API call at a time, in turn, until all are done."""
    while conversations:
        conversations = [c for c in conversations if next(c, StopIteration) is not StopIteration]


def calls(out: Path, capture: str) -> None:
    """The openai and anthropic SDKs, each call logged as one JSONL line (no telemetry library)."""
    import anthropic
    import openai

    chat_lines: list[str] = []
    anthropic_lines: list[str] = []
    with fake_openai() as url:
        chat = openai.OpenAI(base_url=url, api_key="test", http_client=_call_logger(openai, chat_lines))
        _interleaved([_chat_conversation(chat, q) for q in CONVERSATIONS])
        claude = anthropic.Anthropic(base_url=url.removesuffix("/v1"), api_key="test",
                                     http_client=_call_logger(anthropic, anthropic_lines))
        _interleaved([_anthropic_conversation(claude, q) for q in CONVERSATIONS])
    (out / "chat_calls.jsonl").write_text("".join(line + "\n" for line in chat_lines))
    (out / "anthropic_calls.jsonl").write_text("".join(line + "\n" for line in anthropic_lines))


@contextmanager
def fake_service(on_post: Callable[[str, dict[str, str], bytes], None]) -> Iterator[str]:
    """An HTTP service on 127.0.0.1 that answers `{}` to everything and hands each POST to `on_post`."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            on_post(self.path, dict(self.headers), body)
            self._answer()

        do_PATCH = do_POST
        do_GET = _answer

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def langfuse(out: Path, capture: str) -> None:
    """The Langfuse SDK (OTel-based): its OTLP spans as a JSONL export, its posted scores as a JSON array."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    lines: list[str] = []
    scores: list[Any] = []

    def on_post(path: str, headers: dict[str, str], body: bytes) -> None:
        if path.endswith("/otel/v1/traces"):
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            lines.append(_otlp_json(request))
        elif path.endswith("/scores"):
            sent = json.loads(body)
            scores.extend(sent if isinstance(sent, list) else [sent])

    with fake_service(on_post) as host:
        os.environ.update(LANGFUSE_PUBLIC_KEY="pk-lf-test", LANGFUSE_SECRET_KEY="sk-lf-test", LANGFUSE_HOST=host,
                          LANGFUSE_BASE_URL=host)
        from langfuse import get_client, observe
        from langfuse.openai import openai

        client = get_client()

        @observe(as_type="tool", name="get_weather")
        def traced_tool(city: str) -> str:
            return get_weather(city)

        @observe(name="weather-agent")
        def run() -> str:
            with fake_openai() as url:
                answer = agent(openai.OpenAI(base_url=url, api_key="test"), lambda _i, _n, args: traced_tool(**args))
            client.score_current_trace(name="task_success", value=1.0)
            return answer

        run()
        client.flush()
    (out / "spans.jsonl").write_text("".join(line + "\n" for line in lines))
    (out / "scores.json").write_text(json.dumps(scores))


def langsmith(out: Path, capture: str) -> None:
    """The LangSmith SDK (`traceable`, `wrap_openai`): the runs it posts, reassembled as the service stores
    them (one JSON run per line). CAPTURE `split`: the trace is sent over several requests (a flush while the
    tool runs), the tool run gets feedback naming its run only (no trace id), and besides `runs.jsonl` and
    `feedback.jsonl` each request's run versions, as the SDK sent them, go to `sent/request-<n>.jsonl`."""
    runs: dict[str, dict[str, Any]] = {}
    sent: list[dict[str, dict[str, Any]]] = []
    feedback: list[Any] = []

    def on_post(path: str, headers: dict[str, str], body: bytes) -> None:
        if path.endswith("/feedback"):
            feedback.append(json.loads(body))
        if not path.endswith("/runs/multipart"):
            return
        head = f"Content-Type: {headers['Content-Type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
        versions: dict[str, dict[str, Any]] = {}
        for part in message.iter_parts():
            verb, _, field = part.get_param("name", header="content-disposition").partition(".")
            run_id, _, key = field.partition(".")
            value = json.loads(part.get_payload(decode=True))
            for run in (runs.setdefault(run_id, {}), versions.setdefault(f"{verb}.{run_id}", {})):
                run.update(value) if not key else run.__setitem__(key, value)
        sent.append(versions)

    with fake_service(on_post) as endpoint:
        os.environ.update(LANGSMITH_TRACING="true", LANGSMITH_API_KEY="test", LANGSMITH_ENDPOINT=endpoint)
        import openai
        from langsmith import traceable
        from langsmith.run_helpers import get_current_run_tree
        from langsmith.run_trees import get_cached_client
        from langsmith.wrappers import wrap_openai

        tool_runs: list[str] = []

        @traceable(run_type="tool", name="get_weather")
        def traced_tool(city: str) -> str:
            if capture == "split":  # what is open so far goes out now: the root's start, the first LLM call
                tool_runs.append(str(get_current_run_tree().id))
                get_cached_client().flush()
            return get_weather(city)

        @traceable(name="weather-agent")
        def run() -> str:
            with fake_openai() as url:
                return agent(wrap_openai(openai.OpenAI(base_url=url, api_key="test")),
                             lambda _i, _n, args: traced_tool(**args))

        run()
        get_cached_client().flush()
        for run_id in tool_runs:
            get_cached_client().create_feedback(run_id=run_id, key="task_success", score=1)
    (out / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs.values()))
    if capture == "split":
        (out / "feedback.jsonl").write_text("".join(json.dumps(f) + "\n" for f in feedback))
        (out / "sent").mkdir()
        for n, versions in enumerate(sent):
            (out / "sent" / f"request-{n}.jsonl").write_text("".join(json.dumps(v) + "\n" for v in versions.values()))


if __name__ == "__main__":
    producer, folder = sys.argv[1], Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    drivers = {"otel": otel, "openinference": openinference, "langfuse": langfuse, "langsmith": langsmith,
               "calls": calls, "openai-agents": openai_agents, "openllmetry": openllmetry,
               "openlit": openlit}
    drivers[producer](folder, sys.argv[3] if len(sys.argv) > 3 else "")
