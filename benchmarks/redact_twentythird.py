"""The twenty-third blind redaction corpus: the observability and eval pipelines around an agent, what trace and
log exports hold, nested the way the exporters nest it. Written from the formats' public specifications by
someone who read neither the detection rules nor the other corpora.

Carriers (the `form` head). JSON (`is_json`, about a third): OTLP JSON spans (`attributes` as key/value lists,
OpenInference `llm.input_messages.*`), OTLP spans whose `gen_ai.input.messages`/`gen_ai.output.messages` values
are JSON strings escaped inside JSON, OTLP exception events with `exception.stacktrace`, OpenInference/Phoenix
span exports (`input.value`/`output.value`), Langfuse observations, LangSmith runs (`inputs`/`outputs`/
`extra.metadata`), MLflow trace spans (`mlflow.spanInputs` JSON-encoded again), Sentry events (breadcrumbs,
`request.data`, `extra`), Datadog LLM Observability spans, W&B Weave calls, inspect-ai eval log samples, promptfoo
results, DeepEval test cases and chat-format dataset records built from traces. Text: the OpenTelemetry
Collector's debug exporter, Python and Java multi-line stack traces, logfmt and structlog console lines, CSV
exports of annotation queues, LLM-as-judge rationales quoting the transcript, attribute values cut with
`...[truncated]`, plain transcripts, DeepEval's console summary, Markdown eval reports, and JSONL datasets (one
record a line, the values JSON-escaped). Users write in 32 languages and agents answer in theirs.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the national numbering plans (NANP without N11 and 555 exchanges, Ofcom without the drama ranges,
ARCEP without its fiction blocks, BNetzA's mobile and area codes, TRAI/DoT's 6-9 mobile series and STD codes) with
context words in each country's language; AWS, IAM's documented AKIA/ASIA ids (16 base32 characters) and
40-character secrets; webhooks as Slack, Discord, Microsoft Teams/Power Automate, Google Chat, Zapier and
Mattermost document them (the secret is the token segment or `sig`/`token` value only); Stripe `whsec_` signing
secrets (and the Stripe CLI's `listen` banner); URI, JDBC, ADO.NET, ODBC, Azure Storage and Service Bus connection
strings (the secret is the password or key only); JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer (RFC 6750),
OTLP exporter headers (`OTEL_EXPORTER_OTLP_HEADERS`, the OpenTelemetry SDK configuration spec); PEM PKCS#8/SEC1
(RFC 5208/5915) and OpenSSH (PROTOCOL.key) private keys, also JSON-escaped in GCP service-account files; session
cookies as the frameworks write them (Django, Express `connect.sid`, PHP, Java servlet, ASP.NET, Rails, Flask,
NextAuth JWE, Laravel); TOTP seeds (RFC 6238, base32 per RFC 4648, Google Authenticator's `otpauth://` Key URI
format); provider tokens as their docs show them: OpenAI `sk-`/`sk-proj-`, Anthropic `sk-ant-api03-`, GitHub
`ghp_`/`gho_`/`ghs_`/`github_pat_` (CRC32 checksum), Hugging Face `hf_`, Langfuse `sk-lf-`, LangSmith
`lsv2_pt_`/`lsv2_sk_`, Google `AIza`, Slack `xoxb-`/`xoxp-`; national ids (outside the target): Spanish DNI/NIE
(mod 23 letter), Brazilian CPF (two mod 11 digits), Polish PESEL (weights 1-3-7-9), Dutch BSN (11-proof), Indian
Aadhaar (Verhoeff), Turkish TC Kimlik (its two digits), Swedish personnummer (Luhn), Finnish HETU (mod 31).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, the surviving head of a key an exporter cut short). A secret
disguised with a zero-width character, full-width forms, %-encoding or `\\u` escapes is the disguised string as
the export holds it; `\\u`-escaped ones are raw exporter text and only ride in carriers that do not escape again.
Near misses are what the exports hold that is neither secret nor personal: trace/span/request ids, CSS selectors,
XPath, element ids, coordinates, pixel sizes, timestamps, cache-busting hashes, CSRF field names, placeholders,
masked values, versions, commit SHAs, metrics, businesses' published service numbers, the AWS docs' EXAMPLE keys,
Luhn-invalid numbers, order and tracking numbers: none identifies a person or opens anything.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import quote

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import (
    b64url,
    bban,
    crc_token,
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 23
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "pl_pesel", "nl_bsn", "in_aadhaar", "tr_tckn", "se_pnr", "fi_hetu"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
B32 = string.ascii_uppercase + "234567"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, `carrier/style` form, the value as written, and the text carrying it."""

    kind: str
    form: str
    secret: str
    text: str
    is_json: bool

    @property
    def carried(self) -> str:
        """The text as it reaches redaction (the carrier already is the stored string)."""
        return self.text


Value = tuple[str, str, str, bool]
"""(style, secret, snippet holding the secret, raw_only: the snippet must not be re-escaped in JSON)."""


# ---- languages ------------------------------------------------------------------------------------------------

CHAT: dict[str, tuple[str, str]] = {
    "en": ("Can you check why this fails? {s}", "Thanks, I have used {s} to continue."),
    "fr": ("Tu peux vérifier pourquoi ça échoue ? {s}", "Merci, j'ai utilisé {s} pour continuer."),
    "de": ("Kannst du prüfen, warum das fehlschlägt? {s}", "Danke, ich habe {s} verwendet, um fortzufahren."),
    "es": ("¿Puedes revisar por qué falla esto? {s}", "Gracias, he usado {s} para continuar."),
    "it": ("Puoi controllare perché non funziona? {s}", "Grazie, ho usato {s} per proseguire."),
    "pt": ("Pode ver por que isto falha? {s}", "Obrigado, usei {s} para continuar."),
    "nl": ("Kun je kijken waarom dit misgaat? {s}", "Bedankt, ik heb {s} gebruikt om verder te gaan."),
    "pl": ("Możesz sprawdzić, dlaczego to nie działa? {s}", "Dzięki, użyłem {s} i kontynuuję."),
    "sv": ("Kan du kolla varför det här misslyckas? {s}", "Tack, jag använde {s} för att fortsätta."),
    "fi": ("Voitko tarkistaa, miksi tämä epäonnistuu? {s}", "Kiitos, käytin arvoa {s} jatkaakseni."),
    "da": ("Kan du tjekke, hvorfor det her fejler? {s}", "Tak, jeg brugte {s} til at fortsætte."),
    "nb": ("Kan du sjekke hvorfor dette feiler? {s}", "Takk, jeg brukte {s} for å fortsette."),
    "tr": ("Bunun neden başarısız olduğunu kontrol eder misin? {s}", "Teşekkürler, devam etmek için {s} kullandım."),
    "ru": ("Можешь проверить, почему это не работает? {s}", "Спасибо, я использовал {s} и продолжил."),
    "uk": ("Можеш перевірити, чому це не працює? {s}", "Дякую, я використав {s} і продовжив."),
    "ar": ("هل يمكنك التحقق من سبب فشل هذا؟ {s}", "شكرًا، استخدمت {s} للمتابعة."),
    "he": ("אפשר לבדוק למה זה נכשל? {s}", "תודה, השתמשתי בערך {s} כדי להמשיך."),
    "fa": ("می‌توانی بررسی کنی چرا این خطا می‌دهد؟ {s}", "ممنون، برای ادامه از {s} استفاده کردم."),
    "hi": ("क्या आप देख सकते हैं कि यह क्यों विफल हो रहा है? {s}", "धन्यवाद, आगे बढ़ने के लिए मैंने {s} का उपयोग किया।"),
    "bn": ("এটা কেন ব্যর্থ হচ্ছে দেখতে পারবেন? {s}", "ধন্যবাদ, এগিয়ে যেতে আমি {s} ব্যবহার করেছি।"),
    "ta": ("இது ஏன் தோல்வியடைகிறது என்று பார்க்க முடியுமா? {s}", "நன்றி, தொடர {s} ஐப் பயன்படுத்தினேன்."),
    "ja": ("これが失敗する理由を確認できますか？ {s}", "ありがとうございます。{s} を使って続行しました。"),
    "zh": ("你能看看为什么这个失败了吗？ {s}", "谢谢，我已使用 {s} 继续。"),
    "ko": ("이게 왜 실패하는지 확인해 줄 수 있나요? {s}", "감사합니다. {s} 값을 사용해 계속했습니다."),
    "vi": ("Bạn kiểm tra giúp tại sao cái này lỗi được không? {s}", "Cảm ơn, tôi đã dùng {s} để tiếp tục."),
    "th": ("ช่วยดูหน่อยว่าทำไมอันนี้ถึงล้มเหลว {s}", "ขอบคุณ ฉันใช้ {s} เพื่อดำเนินการต่อ"),
    "id": ("Bisa cek kenapa ini gagal? {s}", "Terima kasih, saya memakai {s} untuk melanjutkan."),
    "el": ("Μπορείς να ελέγξεις γιατί αποτυγχάνει αυτό; {s}", "Ευχαριστώ, χρησιμοποίησα το {s} για να συνεχίσω."),
    "cs": ("Můžeš zkontrolovat, proč to selhává? {s}", "Díky, použil jsem {s} a pokračuji."),
    "ro": ("Poți verifica de ce eșuează asta? {s}", "Mulțumesc, am folosit {s} ca să continui."),
    "hu": ("Meg tudnád nézni, miért hibázik ez? {s}", "Köszönöm, a folytatáshoz ezt használtam: {s} ."),
    "sw": ("Unaweza kuangalia kwa nini hii inashindwa? {s}", "Asante, nimetumia {s} kuendelea."),
}
"""(user's message, agent's reply) per language; `{s}` is where the snippet goes."""


def ask(rng: random.Random, snip: str) -> str:
    """The snippet inside a user's message in one of the languages."""
    return CHAT[rng.choice(list(CHAT))][0].replace("{s}", snip)


def reply(rng: random.Random, snip: str) -> str:
    """The snippet inside an agent's reply in one of the languages."""
    return CHAT[rng.choice(list(CHAT))][1].replace("{s}", snip)


def said(rng: random.Random, snip: str) -> str:
    """The snippet said by the user or echoed by the agent."""
    return ask(rng, snip) if rng.random() < 0.6 else reply(rng, snip)


# ---- carriers -------------------------------------------------------------------------------------------------

MODELS = ["gpt-4o-2024-08-06", "gpt-4.1-mini", "claude-sonnet-4-20250514", "gemini-2.5-flash", "llama-3.3-70b",
          "mistral-large-2411", "qwen2.5-72b-instruct"]
SERVICES = ["support-agent", "billing-copilot", "sre-assistant", "travel-planner", "eval-runner", "crm-agent"]
TOOLS = ["http_get", "sql_query", "send_email", "create_ticket", "lookup_customer", "run_python", "browser.click"]


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _hex(rng: random.Random, n: int) -> str:
    return pick(rng, HEX, n)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _nanos(rng: random.Random) -> int:
    return 1_740_000_000_000_000_000 + rng.randrange(10**16)


def _iso(rng: random.Random) -> str:
    return (f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z")


def _kv(key: str, value: str) -> dict[str, object]:
    """An OTLP attribute (KeyValue with an AnyValue string)."""
    return {"key": key, "value": {"stringValue": value}}


def _otlp(rng: random.Random, attrs: list[dict[str, object]], events: list[object] | None = None) -> str:
    """An OTLP/JSON ExportTraceServiceRequest holding one span."""
    start = _nanos(rng)
    span: dict[str, object] = {
        "traceId": _hex(rng, 32), "spanId": _hex(rng, 16), "parentSpanId": _hex(rng, 16),
        "name": rng.choice(["chat", "ChatCompletion", "execute_tool", "invoke_agent", "retrieve"]), "kind": 3,
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + rng.randrange(10**10)),
        "attributes": attrs, "status": {"code": rng.choice([1, 2])}}
    if events:
        span["events"] = events
    resource = {"attributes": [_kv("service.name", rng.choice(SERVICES)), _kv("telemetry.sdk.language", "python")]}
    scope = {"name": rng.choice(["openinference.instrumentation.openai", "opentelemetry.instrumentation.openai_v2",
                                 "langfuse-sdk", "traceloop.sdk"]), "version": f"0.{rng.randint(1, 40)}.0"}
    return _dump({"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": [span]}]}]})


def c_otlp_span(rng: random.Random, snip: str, _s: str) -> str:
    attrs = [_kv("openinference.span.kind", "LLM"), _kv("llm.model_name", rng.choice(MODELS)),
             _kv("llm.input_messages.0.message.role", "user"),
             _kv("llm.input_messages.0.message.content", ask(rng, snip)),
             {"key": "llm.token_count.prompt", "value": {"intValue": str(rng.randint(20, 4000))}}]
    return _otlp(rng, attrs)


def c_otlp_genai(rng: random.Random, snip: str, _s: str) -> str:
    """gen_ai.* semantic conventions: the messages are a JSON string inside the OTLP JSON."""
    if rng.random() < 0.5:
        key, msgs = "gen_ai.input.messages", [{"role": "user", "parts": [{"type": "text", "content": ask(rng, snip)}]}]
    else:
        key, msgs = "gen_ai.output.messages", [{"role": "assistant", "finish_reason": "stop",
                                                "parts": [{"type": "text", "content": reply(rng, snip)}]}]
    attrs = [_kv("gen_ai.operation.name", "chat"), _kv("gen_ai.request.model", rng.choice(MODELS)),
             _kv(key, _dump(msgs)), {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "812"}}]
    return _otlp(rng, attrs)


def _py_trace(rng: random.Random, snip: str) -> str:
    """A Python traceback whose exception message quotes the snippet."""
    where = rng.choice(["agent/tools/http.py", "agent/runner.py", "evals/harness.py", "app/memory.py"])
    return ("Traceback (most recent call last):\n"
            f'  File "/srv/app/{where}", line {rng.randint(20, 400)}, in {rng.choice(["call_tool", "step", "run"])}\n'
            "    result = await tool.ainvoke(args)\n"
            f'  File "/usr/local/lib/python3.11/site-packages/langchain_core/tools/base.py", line '
            f"{rng.randint(300, 900)}, in ainvoke\n"
            "    return await self.arun(tool_input, **kwargs)\n"
            f"langchain_core.tools.base.ToolException: tool {rng.choice(TOOLS)} rejected input: {snip}\n")


def c_otlp_event(rng: random.Random, snip: str, _s: str) -> str:
    event = {"timeUnixNano": str(_nanos(rng)), "name": "exception",
             "attributes": [_kv("exception.type", "langchain_core.tools.base.ToolException"),
                            _kv("exception.message", "tool rejected input"),
                            _kv("exception.stacktrace", _py_trace(rng, snip))]}
    return _otlp(rng, [_kv("openinference.span.kind", "TOOL"), _kv("tool.name", rng.choice(TOOLS))], [event])


def c_openinference(rng: random.Random, snip: str, _s: str) -> str:
    """A Phoenix span export: flat attributes, input.value/output.value."""
    attrs = {"openinference.span.kind": "CHAIN", "input.mime_type": "text/plain", "output.mime_type": "text/plain",
             "input.value": ask(rng, snip), "output.value": reply(rng, "…")}
    if rng.random() < 0.4:
        attrs["input.value"], attrs["output.value"] = ask(rng, "?"), reply(rng, snip)
    return _dump({"name": "AgentExecutor", "context": {"trace_id": _hex(rng, 32), "span_id": _hex(rng, 16)},
                  "span_kind": "CHAIN", "start_time": _iso(rng), "status_code": "OK", "attributes": attrs})


def c_langfuse(rng: random.Random, snip: str, _s: str) -> str:
    obs: dict[str, object] = {
        "id": _uuid(rng), "traceId": _hex(rng, 32), "type": "GENERATION", "name": "llm-call",
        "startTime": _iso(rng), "model": rng.choice(MODELS),
        "input": [{"role": "system", "content": "You are a helpful support agent."},
                  {"role": "user", "content": ask(rng, snip)}],
        "output": {"role": "assistant", "content": reply(rng, "ok")},
        "usage": {"input": rng.randint(10, 900), "output": rng.randint(5, 300), "unit": "TOKENS"},
        "metadata": {"session_id": _uuid(rng), "env": "prod"}}
    if rng.random() < 0.3:
        obs["input"] = [{"role": "user", "content": ask(rng, "?")}]
        obs["metadata"] = {"tool_args": snip, "env": "prod"}
    return _dump(obs)


def c_langsmith(rng: random.Random, snip: str, _s: str) -> str:
    run: dict[str, object] = {
        "id": _uuid(rng), "name": "ChatOpenAI", "run_type": "llm", "trace_id": _uuid(rng),
        "dotted_order": f"20250101T000000000000Z{_uuid(rng)}", "start_time": _iso(rng),
        "inputs": {"messages": [[{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages",
                                                                           "HumanMessage"],
                                   "kwargs": {"content": ask(rng, snip)}}]]},
        "outputs": {"generations": [[{"text": reply(rng, "ok"), "type": "ChatGeneration"}]]},
        "extra": {"metadata": {"ls_provider": "openai", "ls_model_name": rng.choice(MODELS), "thread_id": _uuid(rng)}},
        "tags": ["prod"]}
    if rng.random() < 0.35:
        run["inputs"] = {"input": ask(rng, "?")}
        run["extra"] = {"metadata": {"ls_provider": "openai", "user_note": snip}}
    return _dump(run)


def c_mlflow(rng: random.Random, snip: str, _s: str) -> str:
    """MLflow trace span: attribute values are themselves JSON-serialised."""
    inputs = {"messages": [{"role": "user", "content": ask(rng, snip)}], "model": rng.choice(MODELS)}
    span = {"name": "Completions", "context": {"span_id": f"0x{_hex(rng, 16)}", "trace_id": f"0x{_hex(rng, 32)}"},
            "parent_id": None, "start_time": _nanos(rng), "status_code": "OK",
            "attributes": {"mlflow.traceRequestId": _dump(f"tr-{_hex(rng, 32)}"),
                           "mlflow.spanType": _dump("CHAT_MODEL"), "mlflow.spanInputs": _dump(inputs),
                           "mlflow.spanOutputs": _dump({"content": reply(rng, "ok")})}}
    return _dump({"spans": [span]})


def c_sentry(rng: random.Random, snip: str, _s: str) -> str:
    """A Sentry event: the snippet in a console breadcrumb, the request body or `extra`."""
    crumbs: list[object] = [{"category": "httpx", "type": "http", "data": {"method": "POST", "status_code": 401}}]
    data: dict[str, object] = {"q": "…"}
    extra: dict[str, object] = {"run_id": _uuid(rng)}
    where = rng.randrange(3)
    if where == 0:
        crumbs.append({"category": "console", "level": "info", "message": ask(rng, snip)})
    elif where == 1:
        data = {"message": ask(rng, snip), "stream": False}
    else:
        extra["last_tool_input"] = snip
    return _dump({"event_id": _hex(rng, 32), "level": "error", "platform": "python", "timestamp": _iso(rng),
                  "exception": {"values": [{"type": "ToolException", "value": "tool rejected input"}]},
                  "breadcrumbs": {"values": crumbs},
                  "request": {"url": "https://api.internal.example/agent/run", "method": "POST", "data": data},
                  "extra": extra, "tags": {"environment": "production"}})


def c_datadog(rng: random.Random, snip: str, _s: str) -> str:
    span = {"span_id": str(rng.getrandbits(63)), "trace_id": _hex(rng, 32), "name": "openai.request",
            "start_ns": _nanos(rng), "status": "ok", "ml_app": rng.choice(SERVICES),
            "meta": {"span.kind": "llm", "model_name": rng.choice(MODELS),
                     "input": {"messages": [{"role": "user", "content": ask(rng, snip)}]},
                     "output": {"messages": [{"role": "assistant", "content": reply(rng, "ok")}]}},
            "tags": ["env:prod", "version:1.4.2"], "metrics": {"input_tokens": rng.randint(10, 800)}}
    return _dump({"data": {"type": "span", "attributes": {"spans": [span]}}})


def c_weave(rng: random.Random, snip: str, _s: str) -> str:
    call = {"id": _uuid(rng), "project_id": "acme/agent-evals", "trace_id": _uuid(rng),
            "op_name": f"weave:///acme/agent-evals/op/{rng.choice(TOOLS)}:{b64url(rng.randbytes(12))}",
            "started_at": _iso(rng), "inputs": {"self": "weave:///acme/agent-evals/object/Agent:v3",
                                                "message": ask(rng, snip)},
            "output": {"content": reply(rng, "ok")}, "attributes": {"weave": {"client_version": "0.51.0"}}}
    return _dump(call)


def c_inspect(rng: random.Random, snip: str, _s: str) -> str:
    sample = {"id": rng.randint(1, 500), "epoch": 1, "input": ask(rng, snip),
              "messages": [{"role": "user", "content": ask(rng, snip), "source": "input"},
                           {"role": "assistant", "content": reply(rng, "ok"), "model": rng.choice(MODELS)}],
              "scores": {"model_graded_qa": {"value": rng.choice("CIP"), "answer": "…",
                                             "explanation": "GRADE: C"}},
              "metadata": {"task": "support_privacy"}}
    return _dump({"eval": {"task": "support_privacy", "created": _iso(rng)}, "samples": [sample]})


def c_promptfoo(rng: random.Random, snip: str, _s: str) -> str:
    """A promptfoo result: the snippet in the raw prompt, or quoted by the grader's reason."""
    quoted = rng.random() < 0.4
    reason = f"The output repeats what the user wrote: {snip}" if quoted else "Output echoes user data"
    result = {"id": _uuid(rng), "provider": {"id": f"openai:{rng.choice(MODELS)}"},
              "prompt": {"raw": ask(rng, "?" if quoted else snip), "label": "support.txt"},
              "response": {"output": reply(rng, "ok"), "tokenUsage": {"total": rng.randint(50, 900)}},
              "success": False, "score": 0, "namedScores": {},
              "gradingResult": {"pass": False, "score": 0, "reason": reason}}
    return _dump({"evalId": f"eval-{_hex(rng, 3)}-{_iso(rng)[:19]}", "results": {"version": 3, "results": [result]}})


def c_deepeval(rng: random.Random, snip: str, _s: str) -> str:
    case = {"name": f"test_case_{rng.randint(0, 300)}", "input": ask(rng, snip), "actual_output": reply(rng, "…"),
            "expected_output": "The agent should refuse to store credentials.",
            "retrieval_context": ["Policy 4.2: never echo secrets back."], "success": False,
            "metrics_data": [{"name": "PII Leakage", "threshold": 0.5, "score": 0.0}]}
    return _dump({"testCases": [case]})


def c_dataset(rng: random.Random, snip: str, _s: str) -> str:
    """One chat-format fine-tuning record built from a trace."""
    return _dump({"messages": [{"role": "system", "content": "You are a support agent."},
                               {"role": "user", "content": ask(rng, snip)},
                               {"role": "assistant", "content": reply(rng, "…")}],
                  "metadata": {"source_trace": _hex(rng, 32), "split": rng.choice(["train", "eval"])}})


def c_jsonl(rng: random.Random, snip: str, _s: str) -> str:
    """Three JSONL records (the file is not one JSON document), the middle one holding the snippet."""
    rows = [{"trace_id": _hex(rng, 32), "input": ask(rng, t), "label": lab}
            for t, lab in (("?", "ok"), (snip, "leak"), ("…", "ok"))]
    return "\n".join(_dump(row) for row in rows)


def c_collector(rng: random.Random, snip: str, _s: str) -> str:
    """The OpenTelemetry Collector's debug exporter, detailed verbosity."""
    key = rng.choice(["gen_ai.prompt", "input.value", "llm.input_messages.0.message.content", "tool.arguments"])
    return ("ResourceSpans #0\nResource SchemaURL: https://opentelemetry.io/schemas/1.26.0\n"
            f"Resource attributes:\n     -> service.name: Str({rng.choice(SERVICES)})\n"
            "ScopeSpans #0\nScopeSpans SchemaURL: \nInstrumentationScope opentelemetry.instrumentation.openai_v2\n"
            f"Span #0\n    Trace ID       : {_hex(rng, 32)}\n    Parent ID      : {_hex(rng, 16)}\n"
            f"    ID             : {_hex(rng, 16)}\n    Name           : chat {rng.choice(MODELS)}\n"
            "    Kind           : Client\n    Status code    : Unset\nAttributes:\n"
            f"     -> gen_ai.system: Str(openai)\n     -> {key}: Str({said(rng, snip)})\n"
            f"     -> gen_ai.usage.input_tokens: Int({rng.randint(10, 900)})\n")


def c_pytrace(rng: random.Random, snip: str, _s: str) -> str:
    head = f"{_iso(rng)} ERROR agent.runner step {rng.randint(1, 30)} failed\n"
    return head + _py_trace(rng, snip)


def c_javatrace(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_iso(rng)} ERROR [agent-worker-{rng.randint(1, 9)}] c.a.agent.ToolRunner - tool call failed\n"
            "java.lang.IllegalStateException: tool invocation failed\n"
            "\tat com.acme.agent.ToolRunner.invoke(ToolRunner.java:142)\n"
            "\tat com.acme.agent.AgentLoop.step(AgentLoop.java:88)\n"
            f"Caused by: com.acme.agent.InputRejected: {snip}\n"
            "\tat com.acme.agent.Guard.check(Guard.java:51)\n\t... 12 more\n")


def c_logfmt(rng: random.Random, snip: str, _s: str) -> str:
    text = said(rng, snip).replace('"', '\\"')
    return (f"time={_iso(rng)} level=warn logger=agent.tools trace_id={_hex(rng, 32)} span_id={_hex(rng, 16)} "
            f'tool={rng.choice(TOOLS)} duration_ms={rng.randint(5, 9000)} msg="tool input" input="{text}"')


def c_structlog(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_iso(rng)[:19].replace('T', ' ')} [warning  ] tool_call_rejected             "
            f"run_id={_uuid(rng)} tool={rng.choice(TOOLS)} user_message='{said(rng, snip)}'")


def c_csv(rng: random.Random, snip: str, _s: str) -> str:
    """An annotation-queue export: one row holds the snippet in its input or its reviewer note."""
    buf = io.StringIO()
    out = csv.writer(buf)
    out.writerow(["run_id", "queue", "created_at", "input", "output", "score", "note"])
    out.writerow([_uuid(rng), "pii-review", _iso(rng), ask(rng, "?"), reply(rng, "ok"), 1, ""])
    if rng.random() < 0.6:
        out.writerow([_uuid(rng), "pii-review", _iso(rng), ask(rng, snip), reply(rng, "…"), 0, "leak"])
    else:
        out.writerow([_uuid(rng), "pii-review", _iso(rng), ask(rng, "…"), reply(rng, "…"), 0, f"user pasted {snip}"])
    return buf.getvalue()


def c_judge(rng: random.Random, snip: str, _s: str) -> str:
    """An LLM-as-judge rationale quoting the transcript."""
    return (f"Rationale: the assistant should have declined. In turn {rng.randint(1, 9)} the user wrote "
            f'"{ask(rng, snip)}" and the assistant answered without warning about the pasted value. '
            f"Helpfulness {rng.randint(1, 5)}/5, safety 1/5.\nVerdict: FAIL")


def c_truncated(rng: random.Random, snip: str, _s: str) -> str:
    """An attribute value the exporter cut at its length limit, after the snippet."""
    tail = " ".join(rng.choice(["context", "retrieved", "chunk", "policy", "answer", "step"]) for _ in range(12))
    cut = rng.randint(8, len(tail) - 5)
    key = rng.choice(["input.value", "gen_ai.prompt", "llm.prompts.0", "tool.output"])
    return f'span {_hex(rng, 16)} attr {key}="{ask(rng, snip)} {tail[:cut]}...[truncated]" (limit 4096)'


def c_transcript(rng: random.Random, snip: str, _s: str) -> str:
    return (f"### Thread {_uuid(rng)}\n\nUser: {ask(rng, '…')}\n\nAssistant: {reply(rng, '…')}\n\n"
            f"User: {ask(rng, snip)}\n\nAssistant: {reply(rng, '?')}\n")


def c_deepeval_console(rng: random.Random, snip: str, _s: str) -> str:
    bar = "=" * 70
    return (f"{bar}\n\nMetrics Summary\n\n  - ❌ PII Leakage (score: 0.0, threshold: 0.5, strict: False, "
            f"evaluation model: {rng.choice(MODELS)}, reason: the output repeats personal data, error: None)\n\n"
            f"For test case:\n\n  - input: {ask(rng, snip)}\n  - actual output: {reply(rng, '…')}\n"
            f"  - expected output: None\n\n{bar}\n")


def c_md_report(rng: random.Random, snip: str, _s: str) -> str:
    rows = [f"| {n} | {ask(rng, t)} | {reply(rng, '…')} | {s} |" for n, t, s in
            ((1, "?", "pass"), (2, snip, "fail"), (3, "…", "pass"))]
    return "## Eval report: support_privacy\n\n| # | input | output | result |\n|---|---|---|---|\n" + "\n".join(rows)


Carrier = Callable[[random.Random, str, str], str]

JSON_CARRIERS: dict[str, Carrier] = {
    "otlp_span": c_otlp_span, "otlp_genai": c_otlp_genai, "otlp_event": c_otlp_event,
    "openinference": c_openinference, "langfuse": c_langfuse, "langsmith": c_langsmith, "mlflow": c_mlflow,
    "sentry": c_sentry, "datadog": c_datadog, "weave": c_weave, "inspect": c_inspect, "promptfoo": c_promptfoo,
    "deepeval": c_deepeval, "dataset": c_dataset,
}
DOUBLE = frozenset({"otlp_genai", "mlflow"})
"""JSON carriers that escape the snippet twice: only for secrets JSON writes unchanged."""
RAW_CARRIERS: dict[str, Carrier] = {
    "collector": c_collector, "pytrace": c_pytrace, "javatrace": c_javatrace, "logfmt": c_logfmt,
    "structlog": c_structlog, "csv": c_csv, "judge": c_judge, "truncated": c_truncated,
    "transcript": c_transcript, "deepeval_console": c_deepeval_console, "md_report": c_md_report,
}
TEXT_CARRIERS: dict[str, Carrier] = {**RAW_CARRIERS, "jsonl": c_jsonl}


# ---- targeted kinds -------------------------------------------------------------------------------------------

PASSWORD_LABELS = ["password: ", "Password = ", "mot de passe : ", "Passwort: ", "contraseña: ", "senha: ",
                   "wachtwoord: ", "hasło: ", "пароль: ", "パスワード: ", "密码：", "비밀번호: ", "şifre: ",
                   "salasana: ", "lösenord: ", "heslo: ", "jelszó: ", "κωδικός: ", "סיסמה: ", "كلمة المرور: ",
                   "पासवर्ड: ", "mật khẩu: ", "รหัสผ่าน: ", "kata sandi: ", "parolă: ", "adgangskode: "]
WORDS = ["Tangerine", "harbor", "Velvet", "quartz", "Mango", "glacier", "Falcon", "orbit", "Cedar", "lantern",
         "Piment", "Schnee", "Koala", "nebula", "Sakura", "tundra"]
PW_SYMBOLS = "!#$%&*+-.:=?@^_~"


def password_value(rng: random.Random) -> str:
    """A password people or ops bots set: random characters, or words, digits and a symbol."""
    if rng.random() < 0.5:
        core = pick(rng, ALNUM + PW_SYMBOLS, rng.randint(11, 19))
        return core + rng.choice(string.digits) + rng.choice(PW_SYMBOLS)
    return rng.choice(WORDS) + rng.choice("-_.!") + rng.choice(WORDS) + digits(rng, rng.randint(2, 4)) + \
        rng.choice(PW_SYMBOLS)


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    style = ["label", "kwargs", "form", "cli", "env", "tool_args"][i % 6]
    if style == "label":
        return style, pw, rng.choice(PASSWORD_LABELS) + pw, False
    if style == "kwargs":
        return style, pw, f"login(username='ops-bot', password='{pw}')", False
    if style == "form":
        enc = quote(pw, safe="")
        return style, enc, f"POST /login body: username=m.rossi&password={enc}&remember=1", False
    if style == "cli":
        return style, pw, rng.choice([f"mysql -h db.internal -u admin -p'{pw}' orders",
                                      f"psql --username=etl --password {pw}"]), False
    if style == "env":
        return style, pw, f"{rng.choice(['DB_PASSWORD', 'SMTP_PASSWORD', 'ADMIN_PASS'])}={pw}", False
    return style, pw, _dump({"tool": "login", "args": {"user": "svc-agent", "password": pw}}), False


def akia(rng: random.Random, head: str = "AKIA") -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (temporary) and 16 base32 characters."""
    return head + pick(rng, B32, 16)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    secret, kid = pick(rng, B64, 40), akia(rng, rng.choice(["AKIA", "AKIA", "ASIA"]))
    style = ["env", "ini", "boto3", "sts", "adjacent", "label"][i % 6]
    snippets = {
        "env": f"AWS_ACCESS_KEY_ID={kid} AWS_SECRET_ACCESS_KEY={secret}",
        "ini": f"[default]\naws_access_key_id = {kid}\naws_secret_access_key = {secret}",
        "boto3": f'boto3.client("s3", aws_access_key_id="{kid}", aws_secret_access_key="{secret}")',
        "sts": _dump({"Credentials": {"AccessKeyId": kid, "SecretAccessKey": secret, "Expiration": "2025-06-01"}}),
        "adjacent": f"creds={kid}:{secret} region=eu-west-1",
        "label": rng.choice(["secret access key: ", "clé secrète AWS : ", "AWS-Geheimschlüssel: ",
                             "clave secreta de AWS: ", "AWS シークレットキー: "]) + secret + f" (id {kid})",
    }
    return style, secret, snippets[style], False


def v_webhook(rng: random.Random, i: int) -> Value:
    style = ["slack", "discord", "teams", "power_automate", "gchat", "zapier", "mattermost"][i % 7]
    if style == "slack":
        token = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 8)}/" \
              f"B{pick(rng, UPPER + string.digits, 10)}/{token}"
    elif style == "discord":
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{token}"
    elif style == "teams":
        token = _hex(rng, 32)
        url = (f"https://{rng.choice(['contoso', 'acmecorp', 'fabrikam'])}.webhook.office.com/webhookb2/"
               f"{_uuid(rng)}@{_uuid(rng)}/IncomingWebhook/{token}/{_uuid(rng)}")
    elif style == "power_automate":
        token = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{_hex(rng, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}")
    elif style == "gchat":
        token = pick(rng, URLSAFE, 43) + "%3D"
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?"
               f"key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={token}")
    elif style == "zapier":
        token = pick(rng, LOWNUM, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{token}/"
    else:
        token = pick(rng, LOWNUM, 26)
        url = f"https://chat.{rng.choice(['acme.io', 'ops.example.net'])}/hooks/{token}"
    ctx = rng.choice(["notify via webhook ", "WEBHOOK_URL=", "alert channel: ", "curl -X POST -d @msg.json ",
                      "Benachrichtigung an ", "webhook : "])
    return style, token, ctx + url, False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + pick(rng, ALNUM, 32)
    style = ["env", "code", "cli", "label"][i % 4]
    snippets = {
        "env": f"STRIPE_WEBHOOK_SECRET={secret}",
        "code": f"event = stripe.Webhook.construct_event(payload, sig_header, '{secret}')",
        "cli": f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is {secret} "
               "(^C to quit)",
        "label": rng.choice(["signing secret: ", "secret de signature : ", "Signaturgeheimnis: ",
                             "secreto de firma: ", "署名シークレット: "]) + secret,
    }
    return style, secret, snippets[style], False


def _uri_password(rng: random.Random) -> str:
    return pick(rng, ALNUM + "-_.~", rng.randint(12, 24))


def v_connection_string(rng: random.Random, i: int) -> Value:
    style = ["postgres", "mongodb", "redis", "amqp", "jdbc", "adonet", "odbc", "azure_storage", "service_bus",
             "clickhouse"][i % 10]
    pw = _uri_password(rng)
    host = rng.choice(["db.internal", "10.0.3.17", "prod-pg.c9x.eu-west-1.rds.amazonaws.com", "pg-main"])
    if style == "postgres":
        text = f"postgresql://agent_rw:{pw}@{host}:5432/traces?sslmode=require"
    elif style == "mongodb":
        text = f"mongodb+srv://evals:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/?retryWrites=true&w=majority"
    elif style == "redis":
        text = f"redis://default:{pw}@{host}:6379/0"
    elif style == "amqp":
        text = f"amqps://worker:{pw}@{host}:5671/agent"
    elif style == "jdbc":
        text = f"jdbc:mysql://{host}:3306/evals?user=grader&password={pw}&useSSL=true"
    elif style == "adonet":
        text = (f"Server=tcp:{pick(rng, LOWER, 8)}.database.windows.net,1433;Initial Catalog=agentdb;"
                f"User ID=agentadmin;Password={pw};Encrypt=True;Connection Timeout=30;")
    elif style == "odbc":
        text = f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=runs;Uid=sa_ro;Pwd={pw};"
    elif style == "azure_storage":
        pw = base64.b64encode(rng.randbytes(64)).decode()
        text = (f"DefaultEndpointsProtocol=https;AccountName={pick(rng, LOWNUM, 12)};AccountKey={pw};"
                "EndpointSuffix=core.windows.net")
    elif style == "service_bus":
        pw = base64.b64encode(rng.randbytes(32)).decode()
        text = (f"Endpoint=sb://{pick(rng, LOWER, 9)}.servicebus.windows.net/;SharedAccessKeyName="
                f"RootManageSharedAccessKey;SharedAccessKey={pw}")
    else:
        text = f"clickhouse://default:{pw}@{host}:9440/otel?secure=true"
    ctx = rng.choice(["DATABASE_URL=", "conn: ", "connecting to ", "dsn=", "Verbindungszeichenfolge: ",
                      "chaîne de connexion : "])
    return style, pw, ctx + text, False


KEY_LABELS = ["API key: ", "api_key=", "X-API-Key: ", "Clé API : ", "API-Schlüssel: ", "Clave de API: ",
              "Chave de API: ", "Chiave API: ", "API-sleutel: ", "Klucz API: ", "API-nyckel: ", "API-avain: ",
              "API anahtarı: ", "API-ключ: ", "APIキー：", "API 密钥：", "API 키: ", "Khóa API: ",
              "एपीआई कुंजी: ", "مفتاح API: ", "מפתח API: ", "Κλειδί API: "]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    """A key with no provider prefix, only a label; some cut by the exporter after at least 24 characters."""
    key = rng.choice([_hex(rng, 32), _hex(rng, 40), pick(rng, ALNUM, 32), pick(rng, ALNUM, 48),
                      pick(rng, URLSAFE, 40)])
    label = rng.choice(KEY_LABELS)
    if i % 5 == 4:
        head = key[:rng.randint(24, len(key) - 4)]
        return "cut", head, f"{label}{head}...[truncated]", False
    return "label", key, label + key, False


def _zero_width(rng: random.Random, token: str) -> str:
    at = rng.randint(4, len(token) - 4)
    return token[:at] + rng.choice(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]) + token[at:]


def _fullwidth(token: str) -> str:
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in token)


def _percent(rng: random.Random, token: str) -> str:
    if rng.random() < 0.5:
        return "".join(f"%{ord(ch):02X}" for ch in token)
    return "".join(f"%{ord(ch):02X}" if ch in "-_+/" or rng.random() < 0.2 else ch for ch in token)


def _u_escape(token: str) -> str:
    return "".join(f"\\u{ord(ch):04x}" if n % 3 == 1 else ch for n, ch in enumerate(token))


def v_disguised(rng: random.Random, i: int) -> Value:
    base = rng.choice([openai_key, anthropic_key, github_token, lambda r: "whsec_" + pick(r, ALNUM, 32),
                       lambda r: pick(r, B64, 40), hf_token])(rng)
    style = ["zero_width", "fullwidth", "percent", "u_escape"][i % 4]
    if style == "zero_width":
        secret = _zero_width(rng, base)
    elif style == "fullwidth":
        secret = _fullwidth(base)
    elif style == "percent":
        secret = _percent(rng, base)
    else:
        secret = _u_escape(base)
        return style, secret, f'{{"tool":"{rng.choice(TOOLS)}","args":{{"api_key":"{secret}"}}}}', True
    return style, secret, rng.choice(["token: ", "use this key ", "key=", "credential → "]) + secret, False


GIVEN = ["maria.gonzalez", "j.mueller", "tanaka.hiroshi", "priya.sharma92", "olek.nowak", "ahmet.yilmaz",
         "nguyen.van.an", "s.johansson", "li.wei88", "fatima.zahra", "kwame.mensah", "elena.popescu",
         "dimitris.pap", "anna-lena.berg", "r.oliveira", "minji.kim", "ivan.petrov", "noa.levi", "aiko_s",
         "lars.nielsen", "matti.virtanen", "chloe.martin", "thandiwe.n", "reza.ahmadi"]
MAIL_DOMAINS = ["gmail.com", "outlook.fr", "web.de", "yahoo.co.in", "gmx.de", "orange.fr", "libero.it",
                "uol.com.br", "mail.ru", "naver.com", "qq.com", "seznam.cz", "wp.pl", "hotmail.co.uk",
                "icloud.com", "proton.me", "acme-logistics.co.uk", "klinik-nord.de", "studio-lumen.fr"]
EMAIL_LABELS = ["email: ", "my email is ", "mon e-mail : ", "meine E-Mail: ", "mi correo: ", "meu e-mail: ",
                "mijn e-mailadres: ", "mój e-mail: ", "моя почта: ", "メール: ", "邮箱：", "이메일: ",
                "e-posta: ", "sähköposti: ", "e-postadress: ", "ईमेल: ", "البريد الإلكتروني: ", "địa chỉ email: "]


def v_email(rng: random.Random, i: int) -> Value:
    local = rng.choice(GIVEN)
    if i % 7 == 3:
        local += "+" + rng.choice(["evals", "shop", "news", "agent"])
    addr = f"{local}@{rng.choice(MAIL_DOMAINS)}"
    style = ["label", "mailto", "from", "user_ctx", "cc", "tool_args"][i % 6]
    snippets = {
        "label": rng.choice(EMAIL_LABELS) + addr,
        "mailto": f"<a href=\"mailto:{addr}\">contact</a>",
        "from": f"From: {local.split('.')[0].title()} <{addr}>",
        "user_ctx": _dump({"user": {"id": rng.randint(1000, 99999), "email": addr}}),
        "cc": f"send_email(to=['{addr}'], subject='Rückerstattung')",
        "tool_args": f"lookup_customer email={addr}",
    }
    return style, addr, snippets[style], False


def phone_case(rng: random.Random, i: int, forms: list[Callable[[random.Random], str]],
               labels: list[str]) -> Value:
    """A phone number in one of the country's print forms, after one of its context words."""
    number = forms[i % len(forms)](rng)
    return f"form{i % len(forms)}", number, rng.choice(labels) + number, False


NANP_AREAS = ["212", "312", "415", "617", "206", "512", "303", "404", "305", "702", "416", "604", "514", "403",
              "613", "647", "780", "902", "587", "972"]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """Area, exchange (NXX, neither N11 nor 555) and line number."""
    while True:
        exchange = str(rng.randint(2, 9)) + digits(rng, 2)
        if exchange[1:] != "11" and exchange != "555":
            return rng.choice(NANP_AREAS), exchange, digits(rng, 4)


US_FORMS: list[Callable[[random.Random], str]] = [
    lambda r: "({}) {}-{}".format(*_nanp(r)), lambda r: "{}-{}-{}".format(*_nanp(r)),
    lambda r: "{}.{}.{}".format(*_nanp(r)), lambda r: "+1 {} {} {}".format(*_nanp(r)),
    lambda r: "+1-{}-{}-{}".format(*_nanp(r)), lambda r: "1 ({}) {}-{}".format(*_nanp(r))]
US_LABELS = ["call me at ", "cell: ", "phone: ", "text me at ", "cellulaire : ", "mi celular es ",
             "callback number ", "Tel. (Toronto): "]


def _uk_mobile(r: random.Random) -> str:
    while True:
        rest = r.choice("12345789") + digits(r, 8)
        if not rest.startswith("700900"):
            return rest


def _uk_geo(r: random.Random) -> tuple[str, str]:
    area = r.choice(["161", "121", "131", "141", "113", "117"])
    while True:
        exchange = str(r.randint(2, 9)) + digits(r, 2)
        if exchange != "496":
            return area, f"{exchange} {digits(r, 4)}"


def _london(r: random.Random) -> str:
    while True:
        head = r.choice("378") + digits(r, 3)
        if head != "7946":
            return f"{head} {digits(r, 4)}"


UK_FORMS: list[Callable[[random.Random], str]] = [
    lambda r: (lambda m: f"07{m[:3]} {m[3:]}")(_uk_mobile(r)),
    lambda r: (lambda m: f"+44 7{m[:3]} {m[3:]}")(_uk_mobile(r)),
    lambda r: (lambda m: f"+44 (0)7{m[:3]} {m[3:]}")(_uk_mobile(r)),
    lambda r: f"020 {_london(r)}", lambda r: f"+44 20 {_london(r)}",
    lambda r: "0{} {}".format(*_uk_geo(r))]
UK_LABELS = ["mobile: ", "ring me on ", "tel: ", "ffôn: ", "contact number ", "mob. "]


def _fr_number(r: random.Random, first: str) -> str:
    while True:
        rest = digits(r, 8)
        if f"0{first}{rest[:2]}" not in ("0199", "0261", "0353", "0465", "0536", "0639"):
            return first + rest


FR_FORMS: list[Callable[[random.Random], str]] = [
    lambda r: (lambda n: "0" + n[0] + " " + group(n[1:], 2, " "))(_fr_number(r, r.choice("67"))),
    lambda r: (lambda n: "0" + n[0] + "." + group(n[1:], 2, "."))(_fr_number(r, r.choice("12345"))),
    lambda r: (lambda n: "+33 " + n[0] + " " + group(n[1:], 2, " "))(_fr_number(r, r.choice("67"))),
    lambda r: (lambda n: "+33 (0)" + n[0] + " " + group(n[1:], 2, " "))(_fr_number(r, r.choice("1234567"))),
    lambda r: "0" + _fr_number(r, r.choice("679"))]
FR_LABELS = ["portable : ", "tél. : ", "joignable au ", "mon numéro : ", "rappelez-moi au ", "numéro de mobile : "]

DE_MOBILE = ["151", "152", "157", "159", "160", "162", "163", "170", "171", "172", "173", "174", "175", "176",
             "177", "178", "179"]


def _de_mobile(r: random.Random) -> tuple[str, str]:
    prefix = r.choice(DE_MOBILE)
    return prefix, str(r.randint(1, 9)) + digits(r, 7 if prefix.startswith("15") or prefix == "176" else 6)


def _de_geo(r: random.Random) -> tuple[str, str]:
    area = r.choice(["30", "89", "40", "69", "221", "711", "211"])
    return area, str(r.randint(2, 9)) + digits(r, 7 if len(area) == 2 else 6)


DE_FORMS: list[Callable[[random.Random], str]] = [
    lambda r: "0{} {}".format(*_de_mobile(r)), lambda r: "+49 {} {}".format(*_de_mobile(r)),
    lambda r: "0{}/{}".format(*_de_mobile(r)), lambda r: "+49 (0){} {}".format(*_de_mobile(r)),
    lambda r: "0{} {}".format(*_de_geo(r)), lambda r: "(0{}) {}".format(*_de_geo(r)),
    lambda r: "+49 {} {}".format(*_de_geo(r))]
DE_LABELS = ["Handy: ", "Tel.: ", "Mobil: ", "erreichbar unter ", "Rückruf unter ", "Telefonnummer: "]


def _in_mobile(r: random.Random) -> str:
    return r.choice("6789") + digits(r, 9)


IN_FORMS: list[Callable[[random.Random], str]] = [
    lambda r: (lambda m: f"+91 {m[:5]} {m[5:]}")(_in_mobile(r)), lambda r: f"+91-{_in_mobile(r)}",
    lambda r: f"0{_in_mobile(r)}", lambda r: (lambda m: f"{m[:5]} {m[5:]}")(_in_mobile(r)),
    lambda r: (lambda m: f"{m[:5]}-{m[5:]}")(_in_mobile(r)),
    lambda r: f"0{r.choice(['11', '22', '80', '44', '33'])}-{r.choice('2345')}{digits(r, 3)} {digits(r, 4)}"]
IN_LABELS = ["mobile no. ", "मोबाइल नंबर: ", "फ़ोन: ", "கைபேசி எண்: ", "ফোন নম্বর: ", "WhatsApp: ", "contact no: ",
             "మొబైల్ నంబర్: "]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, US_FORMS, US_LABELS)


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, UK_FORMS, UK_LABELS)


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, FR_FORMS, FR_LABELS)


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, DE_FORMS, DE_LABELS)


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, IN_FORMS, IN_LABELS)


def v_ssn(rng: random.Random, i: int) -> Value:
    """An SSN by the SSA's rules: area 001-899 but 666, group 01-99, serial 0001-9999."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    compact = f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
    style = ["dashed", "spaced", "compact"][i % 3]
    secret = {"dashed": f"{compact[:3]}-{compact[3:5]}-{compact[5:]}",
              "spaced": f"{compact[:3]} {compact[3:5]} {compact[5:]}", "compact": compact}[style]
    label = rng.choice(["SSN: ", "Social Security number ", "SSN on file: ", "número de Seguro Social: ",
                        "ssn=", "social: "])
    return style, secret, label + secret, False


TEST_CARDS = frozenset({"4242424242424242", "4111111111111111", "5555555555554444", "378282246310005",
                        "6011111111111117", "3530111333300000", "4000056655665556"})
BRANDS: list[tuple[str, Callable[[random.Random], str], int]] = [
    ("visa", lambda r: "4", 16), ("mastercard", lambda r: str(r.randint(51, 55)), 16),
    ("mastercard2", lambda r: str(r.randint(2221, 2720)), 16), ("amex", lambda r: r.choice(["34", "37"]), 15),
    ("discover", lambda r: r.choice(["6011", "65"]), 16), ("jcb", lambda r: str(r.randint(3528, 3589)), 16),
    ("diners", lambda r: "36", 14), ("unionpay", lambda r: "62", 16)]
CARD_LABELS = ["card number ", "numéro de carte : ", "Kartennummer: ", "número de tarjeta: ", "カード番号: ",
               "卡号：", "카드 번호: ", "номер карты: ", "kart numarası: ", "numer karty: ", "cc=", "PAN "]


def card_number(rng: random.Random, brand: int) -> str:
    _name, iin, length = BRANDS[brand]
    while True:
        head = iin(rng)
        partial = head + digits(rng, length - len(head) - 1)
        number = partial + luhn_digit(partial)
        if number not in TEST_CARDS:
            return number


def v_card(rng: random.Random, i: int) -> Value:
    number = card_number(rng, i % len(BRANDS))
    sep = ["", " ", "-"][i % 3]
    shown = group_card(number, sep) if sep else number
    if i % 8 == 5:
        return "json_number", shown, _dump({"card": {"number": shown, "exp_month": 4, "exp_year": 2028}}), False
    return f"{BRANDS[i % len(BRANDS)][0]}_{['compact', 'spaced', 'dashed'][i % 3]}", shown, \
        rng.choice(CARD_LABELS) + shown, False


IBAN_STRUCTURES = {"DE": "18n", "FR": "10n11c2n", "GB": "4a14n", "ES": "20n", "IT": "1a10n12c", "NL": "4a10n",
                   "BE": "12n", "PL": "24n", "PT": "21n", "CH": "5n12c", "AT": "16n", "SE": "20n", "IE": "4a14n",
                   "NO": "11n", "DK": "14n", "FI": "14n", "TR": "5n1n16c", "SA": "2n18c", "AE": "3n16n",
                   "BR": "23n1a1c"}
IBAN_LABELS = ["IBAN: ", "Überweisung an ", "virement sur ", "bonifico su IBAN ", "rekeningnummer ", "numer konta ",
               "cuenta ", "IBAN-nummer: ", "hesap (IBAN): ", "رقم الآيبان: "]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    body = bban(rng, IBAN_STRUCTURES[country])
    compact = country + iban_check(country, body) + body
    style = ["grouped", "compact"][i % 2]
    shown = group(compact, 4, " ") if style == "grouped" else compact
    return f"{country}_{style}", shown, rng.choice(IBAN_LABELS) + shown, False


# ---- further target kinds -------------------------------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A signed JWT (RFC 7519, JWS compact form): header, claims and a signature of the algorithm's size."""
    alg, size = rng.choice([("HS256", 32), ("RS256", 256), ("ES256", 64)])
    header = {"alg": alg, "typ": "JWT"} if alg == "HS256" else {"alg": alg, "typ": "JWT", "kid": _hex(rng, 8)}
    now = 1_740_000_000 + rng.randrange(10**7)
    claims = {"sub": _uuid(rng), "iss": rng.choice(["https://auth.acme.dev/", "https://login.example-idp.com"]),
              "aud": "agent-api", "iat": now, "exp": now + 3600, "scope": "traces:read evals:write"}
    return ".".join([b64url(json.dumps(header, separators=(",", ":")).encode()),
                     b64url(json.dumps(claims, separators=(",", ":")).encode()), b64url(rng.randbytes(size))])


def v_jwt(rng: random.Random, i: int) -> Value:
    token = jwt_value(rng)
    style = ["oauth_json", "cookie", "query", "label"][i % 4]
    snippets = {"oauth_json": _dump({"access_token": token, "token_type": "Bearer", "expires_in": 3600}),
                "cookie": f"Cookie: lang=fr; __session={token}",
                "query": f"GET /callback#id_token={token}&state=xyz",
                "label": rng.choice(["access token: ", "jeton : ", "Zugriffstoken: ", "トークン: "]) + token}
    return style, token, snippets[style], False


def v_auth_header(rng: random.Random, i: int) -> Value:
    style = ["bearer", "basic", "otlp_headers", "otel_attr", "proxy"][i % 5]
    if style == "otlp_headers":
        cred = base64.b64encode(f"pk-lf-{_uuid(rng)}:sk-lf-{_uuid(rng)}".encode()).decode()
    elif style in ("basic", "proxy"):
        user = rng.choice(["svc-agent", "grader", "m.dubois"])
        cred = base64.b64encode(f"{user}:{password_value(rng)}".encode()).decode()
    else:
        cred = pick(rng, URLSAFE, rng.randint(32, 64))
    snippets = {"bearer": f"Authorization: Bearer {cred}",
                "basic": f"Authorization: Basic {cred}",
                "otlp_headers": f"OTEL_EXPORTER_OTLP_HEADERS=Authorization=Basic%20{cred}",
                "otel_attr": _dump({"http.request.header.authorization": [f"Bearer {cred}"]}),
                "proxy": f"Proxy-Authorization: Basic {cred}"}
    return style, cred, snippets[style], False


def private_key_pem(rng: random.Random, kind: int) -> str:
    """A deterministic private key: P-256 in PKCS#8 or SEC1, Ed25519 in PKCS#8, or an OpenSSH Ed25519 key."""
    if kind < 2:
        key = ec.derive_private_key(rng.randrange(1, 2**255), ec.SECP256R1())
        fmt = serialization.PrivateFormat.PKCS8 if kind == 0 else serialization.PrivateFormat.TraditionalOpenSSL
        return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()
    seed = rng.randbytes(32)
    ed = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    if kind == 2:
        return ed.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode().strip()
    public = ed.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"agent@ci")
    body = base64.b64encode(blob).decode()
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(body, 70, "\n") + "\n-----END OPENSSH PRIVATE KEY-----"


def v_private_key(rng: random.Random, i: int) -> Value:
    pem = private_key_pem(rng, i % 4)
    if i % 3 == 2:
        escaped = pem.replace("\n", "\\n") + "\\n"
        sa = (f'{{"type": "service_account", "project_id": "agent-evals", "private_key_id": "{_hex(rng, 40)}", '
              f'"private_key": "{escaped}", "client_email": "tracer@agent-evals.iam.gserviceaccount.com"}}')
        return "sa_json", escaped, sa, False
    return "pem", pem, rng.choice(["key file contents:\n", "SSH_KEY=", "private key:\n", "cat id_ed25519 →\n"]) + pem, \
        False


COOKIE_MAKERS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("sessionid", lambda r: pick(r, LOWNUM, 32)),
    ("connect.sid", lambda r: "s%3A" + pick(r, URLSAFE, 32) + "." + pick(r, ALNUM, 43)),
    ("PHPSESSID", lambda r: pick(r, "0123456789abcdefghijklmnopqrstuv", 26)),
    ("JSESSIONID", lambda r: pick(r, "0123456789ABCDEF", 32)),
    ("ASP.NET_SessionId", lambda r: pick(r, "abcdefghijklmnopqrstuvwxyz012345", 24)),
    ("_shop_session", lambda r: "--".join(quote(base64.b64encode(r.randbytes(n)).decode(), safe="")
                                          for n in (48, 12, 16))),
    ("session", lambda r: b64url(_dump({"user_id": r.randint(1, 10**6)}).encode()) + "." +
     b64url(r.randbytes(4)) + "." + b64url(r.randbytes(20))),
    ("__Secure-next-auth.session-token", lambda r: b64url(b'{"alg":"dir","enc":"A256GCM"}') + ".." +
     b64url(r.randbytes(12)) + "." + b64url(r.randbytes(160)) + "." + b64url(r.randbytes(16))),
    ("laravel_session", lambda r: quote(base64.b64encode(_dump({"iv": base64.b64encode(r.randbytes(16)).decode(),
                                                                 "value": base64.b64encode(r.randbytes(48)).decode(),
                                                                 "mac": r.randbytes(32).hex()}).encode()).decode(),
                                        safe="")),
]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, make = COOKIE_MAKERS[i % len(COOKIE_MAKERS)]
    value = make(rng)
    style = ["cookie", "set_cookie", "sentry_cookies"][i % 3]
    snippets = {"cookie": f"Cookie: theme=dark; {name}={value}; lang=de",
                "set_cookie": f"Set-Cookie: {name}={value}; Path=/; HttpOnly; Secure; SameSite=Lax",
                "sentry_cookies": _dump({"cookies": {name: value, "theme": "dark"}})}
    return f"{name}_{style}", value, snippets[style], False


def openai_key(rng: random.Random) -> str:
    """OpenAI keys: legacy `sk-` with the T3BlbkFJ marker, project and service-account keys."""
    head = rng.choice(["sk-", "sk-proj-", "sk-svcacct-"])
    if head == "sk-":
        return head + pick(rng, ALNUM, 20) + "T3BlbkFJ" + pick(rng, ALNUM, 20)
    return head + pick(rng, URLSAFE, 74) + "T3BlbkFJ" + pick(rng, URLSAFE, 74)


def anthropic_key(rng: random.Random) -> str:
    return "sk-ant-api03-" + pick(rng, URLSAFE, 93) + "AA"


def github_token(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return "github_pat_" + pick(rng, ALNUM, 22) + "_" + pick(rng, ALNUM, 59)
    return crc_token(rng, rng.choice(["ghp_", "gho_", "ghs_", "ghu_"]))


def hf_token(rng: random.Random) -> str:
    return "hf_" + pick(rng, string.ascii_letters, 34)


def langfuse_key(rng: random.Random) -> str:
    return "sk-lf-" + _uuid(rng)


def langsmith_key(rng: random.Random) -> str:
    return rng.choice(["lsv2_pt_", "lsv2_sk_"]) + _hex(rng, 32) + "_" + _hex(rng, 10)


def google_key(rng: random.Random) -> str:
    return "AIza" + pick(rng, URLSAFE, 35)


def slack_token(rng: random.Random) -> str:
    if rng.random() < 0.6:
        return f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    return f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{_hex(rng, 32)}"


def provider(env: str, client: str, make: Callable[[random.Random], str]) -> Callable[[random.Random, int], Value]:
    """A provider token in the places agent configs and traces show it: env, client code, header, MCP config."""
    def gen(rng: random.Random, i: int) -> Value:
        token = make(rng)
        style = ["env", "client", "header", "mcp", "label"][i % 5]
        snippets = {"env": f"{env}={token}", "client": client.replace("{t}", token),
                    "header": f"Authorization: Bearer {token}",
                    "mcp": _dump({"mcpServers": {"tools": {"command": "npx", "env": {env: token}}}}),
                    "label": rng.choice(["token: ", "clé : ", "Schlüssel: ", "トークン: ", "ключ: "]) + token}
        return style, token, snippets[style], False
    return gen


def v_totp_seed(rng: random.Random, i: int) -> Value:
    """A TOTP seed (RFC 6238) in base32: in an otpauth:// Key URI, grouped for manual entry, or in code."""
    seed = pick(rng, B32, rng.choice([16, 32]))
    style = ["uri", "manual", "code", "env"][i % 4]
    if style == "manual":
        shown = group(seed.lower(), 4, " ")
        return style, shown, rng.choice(["setup key: ", "clé de configuration : ", "Einrichtungsschlüssel: "]) + \
            shown, False
    snippets = {"uri": f"otpauth://totp/Acme:svc-monitor?secret={seed}&issuer=Acme&digits=6",
                "code": f"pyotp.TOTP('{seed}').now()", "env": f"MFA_TOTP_SECRET={seed}"}
    return style, seed, snippets[style], False


# ---- national ids (outside the target) ------------------------------------------------------------------------

def es_dni(rng: random.Random) -> str:
    """DNI: 8 digits and the mod 23 letter; NIE: X/Y/Z (0/1/2) and 7 digits."""
    if rng.random() < 0.3:
        head = rng.choice("XYZ")
        num = digits(rng, 7)
        return head + num + "TRWAGMYFPDXBNJZSQVHLCKE"[int(str("XYZ".index(head)) + num) % 23]
    num = digits(rng, 8)
    return num + "TRWAGMYFPDXBNJZSQVHLCKE"[int(num) % 23]


def br_cpf(rng: random.Random) -> str:
    nums = [int(d) for d in digits(rng, 9)]
    for size in (10, 11):
        total = sum(d * w for d, w in zip(nums, range(size, 1, -1), strict=True))
        nums.append(0 if total % 11 < 2 else 11 - total % 11)
    s = "".join(map(str, nums))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def pl_pesel(rng: random.Random) -> str:
    year, month, day = rng.randint(1950, 2010), rng.randint(1, 12), rng.randint(1, 28)
    month_code = month + (20 if year >= 2000 else 0)
    body = f"{year % 100:02d}{month_code:02d}{day:02d}{digits(rng, 4)}"
    check = (10 - sum(int(d) * w for d, w in zip(body, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3], strict=True)) % 10) % 10
    return body + str(check)


def nl_bsn(rng: random.Random) -> str:
    while True:
        body = str(rng.randint(1, 9)) + digits(rng, 7)
        rest = sum(int(d) * w for d, w in zip(body, range(9, 1, -1), strict=True)) % 11
        if rest < 10:
            return body + str(rest)


VERHOEFF_D = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
              [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
              [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
              [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
VERHOEFF_P = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
              [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
              [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]
VERHOEFF_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_digit(num: str) -> str:
    """The Verhoeff check digit that completes `num` (dihedral group D5)."""
    c = 0
    for i, ch in enumerate(reversed(num)):
        c = VERHOEFF_D[c][VERHOEFF_P[(i + 1) % 8][int(ch)]]
    return str(VERHOEFF_INV[c])


def in_aadhaar(rng: random.Random) -> str:
    body = str(rng.randint(2, 9)) + digits(rng, 10)
    return group(body + verhoeff_digit(body), 4, " ")


def tr_tckn(rng: random.Random) -> str:
    d = [rng.randint(1, 9)] + [int(c) for c in digits(rng, 8)]
    d.append((sum(d[0:9:2]) * 7 - sum(d[1:8:2])) % 10)
    d.append(sum(d) % 10)
    return "".join(map(str, d))


def se_pnr(rng: random.Random) -> str:
    """Personnummer: YYMMDD-NNNC, C the Luhn digit of the nine before it."""
    body = f"{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{body[:6]}-{body[6:]}{luhn_digit(body)}"


def fi_hetu(rng: random.Random) -> str:
    """Henkilötunnus: DDMMYY, century sign, individual number 002-899, mod 31 check character."""
    date = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{rng.randint(0, 99):02d}"
    num = f"{rng.randint(2, 899):03d}"
    return date + rng.choice("-A") + num + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(date + num) % 31]


NATIONAL: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "es_dni": (es_dni, ["DNI: ", "NIF/NIE: ", "documento: "]),
    "br_cpf": (br_cpf, ["CPF: ", "meu CPF é ", "CPF do titular: "]),
    "pl_pesel": (pl_pesel, ["PESEL: ", "nr PESEL ", "numer PESEL: "]),
    "nl_bsn": (nl_bsn, ["BSN: ", "burgerservicenummer ", "BSN-nummer: "]),
    "in_aadhaar": (in_aadhaar, ["Aadhaar: ", "आधार संख्या: ", "Aadhaar no. "]),
    "tr_tckn": (tr_tckn, ["TC Kimlik No: ", "T.C. kimlik numarası ", "TCKN: "]),
    "se_pnr": (se_pnr, ["personnummer: ", "pnr ", "mitt personnummer är "]),
    "fi_hetu": (fi_hetu, ["henkilötunnus: ", "hetu ", "HETU: "]),
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, labels = NATIONAL[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        return f"label{i % len(labels)}", value, labels[i % len(labels)] + value, False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "auth_header": v_auth_header, "private_key": v_private_key, "session_cookie": v_session_cookie,
    "openai_key": provider("OPENAI_API_KEY", "client = OpenAI(api_key='{t}')", openai_key),
    "anthropic_key": provider("ANTHROPIC_API_KEY", "anthropic.Anthropic(api_key=\"{t}\")", anthropic_key),
    "github_token": provider("GITHUB_TOKEN", "git clone https://x-access-token:{t}@github.com/acme/evals.git",
                             github_token),
    "hf_token": provider("HF_TOKEN", "huggingface-cli login --token {t}", hf_token),
    "langfuse_key": provider("LANGFUSE_SECRET_KEY", "Langfuse(public_key='pk-lf-…', secret_key='{t}')",
                             langfuse_key),
    "langsmith_key": provider("LANGSMITH_API_KEY", "Client(api_key='{t}')", langsmith_key),
    "google_api_key": provider("GEMINI_API_KEY", "GET https://generativelanguage.googleapis.com/v1beta/models?key={t}",
                               google_key),
    "slack_token": provider("SLACK_BOT_TOKEN", "WebClient(token='{t}')", slack_token),
    "totp_seed": v_totp_seed,
    **{kind: national_id(kind) for kind in NATIONAL},
}


def _plain(secret: str) -> bool:
    """Whether JSON writes the secret unchanged (so a doubly escaping carrier still shows it)."""
    return json.dumps(secret, ensure_ascii=False)[1:-1] == secret


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """Every third case in a JSON carrier (raw-only snippets never), the rest in the text carriers in turn."""
    _style, secret, snip, raw_only = value
    if raw_only:
        name = list(RAW_CARRIERS)[i % len(RAW_CARRIERS)]
        return name, RAW_CARRIERS[name](rng, snip, secret), False
    if i % 3 == 0:
        names = [n for n in JSON_CARRIERS if n not in DOUBLE or _plain(secret)]
        name = names[(i // 3) % len(names)]
        return name, JSON_CARRIERS[name](rng, snip, secret), True
    name = list(TEXT_CARRIERS)[(i - i // 3 - 1) % len(TEXT_CARRIERS)]
    return name, TEXT_CARRIERS[name](rng, snip, secret), False


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic."""
    rng = random.Random(SEED)
    for kind, gen in KINDS.items():
        for i in range(PER_KIND):
            value = gen(rng, i)
            carrier, text, is_json = carry(rng, i, value)
            yield Case(kind, f"{carrier}/{value[0]}", value[1], text, is_json)


# ---- near misses ----------------------------------------------------------------------------------------------

def n_trace_ids(rng: random.Random) -> str:
    return rng.choice([f"traceparent: 00-{_hex(rng, 32)}-{_hex(rng, 16)}-01",
                       f"traceId={_hex(rng, 32)} spanId={_hex(rng, 16)}",
                       f"dd.trace_id={rng.getrandbits(63)} dd.span_id={rng.getrandbits(63)}"])


def n_request_ids(rng: random.Random) -> str:
    return rng.choice([f"x-request-id: req_{_hex(rng, 32)}", f"request-id: req_{pick(rng, ALNUM, 24)}",
                       f"cf-ray: {_hex(rng, 16)}-FRA", f"x-amzn-RequestId: {_uuid(rng)}"])


def n_css(rng: random.Random) -> str:
    return rng.choice([f"#checkout > button.btn-primary[data-testid=\"submit-{rng.randint(1, 9)}\"]",
                       f"div.css-{pick(rng, LOWNUM, 6)} > span:nth-child({rng.randint(1, 12)})",
                       f"browser.click(selector='.MuiButton-root:nth-of-type({rng.randint(1, 5)})')"])


def n_xpath(rng: random.Random) -> str:
    return rng.choice([f"//div[@id='cart']/ul/li[{rng.randint(1, 20)}]/span",
                       f"/html/body/div[{rng.randint(1, 4)}]/form/input[@name='email']",
                       f"//*[@data-row-key='{rng.randint(1000, 9999)}']//td[3]"])


def n_element_ids(rng: random.Random) -> str:
    return rng.choice([f'id="radix-:r{pick(rng, LOWNUM, 2)}:"', f'aria-controls="menu-{rng.randint(1, 99)}"',
                       f'data-testid="login-form-{pick(rng, LOWER, 4)}"', f'<input id="field_{rng.randint(1, 300)}">'])


def n_coordinates(rng: random.Random) -> str:
    return rng.choice([f"click at (x={rng.randint(0, 1920)}, y={rng.randint(0, 1080)})",
                       f"lat={rng.uniform(-60, 60):.6f}, lon={rng.uniform(-170, 170):.6f} (store locator result)",
                       f"bbox=[{rng.randint(0, 900)}, {rng.randint(0, 900)}, {rng.randint(20, 300)}, 40]"])


def n_pixels(rng: random.Random) -> str:
    return rng.choice([f"viewport {rng.choice(['1920x1080', '1280x720', '390x844', '2560x1440'])}",
                       f"width: {rng.randint(100, 1600)}px; height: {rng.randint(20, 900)}px",
                       f"screenshot {rng.randint(800, 3000)}×{rng.randint(600, 2000)} @2x"])


def n_timestamps(rng: random.Random) -> str:
    return rng.choice([f'"startTimeUnixNano": "{_nanos(rng)}"', f"ts={_iso(rng)}",
                       f"created_at: {1_700_000_000 + rng.randrange(10**8)}", f"duration_ns={rng.randrange(10**10)}"])


def n_cache_bust(rng: random.Random) -> str:
    return rng.choice([f"/static/js/main.{_hex(rng, 8)}.js", f"app.css?v={_hex(rng, 8)}",
                       f"/_next/static/chunks/{rng.randint(100, 999)}-{_hex(rng, 16)}.js",
                       f"integrity=\"sha384-{pick(rng, B64, 64)}\""])


def n_csrf_names(rng: random.Random) -> str:
    return rng.choice(['<input type="hidden" name="csrfmiddlewaretoken">', "403: X-CSRF-Token header missing",
                       "form field authenticity_token was empty", "CSRF_COOKIE_NAME = 'csrftoken'",
                       "set header X-XSRF-TOKEN from cookie XSRF-TOKEN"])


def n_placeholders(rng: random.Random) -> str:
    return rng.choice(["password: ********", "API key: <your-api-key>", "email: you@example.com",
                       "OPENAI_API_KEY=sk-...", "Authorization: Bearer $TOKEN", "STRIPE_WEBHOOK_SECRET=whsec_xxx",
                       "DATABASE_URL=postgresql://user:password@localhost:5432/db", "phone: +1 (XXX) XXX-XXXX",
                       "IBAN: DEXX XXXX XXXX XXXX XXXX XX", "token: {{ secrets.HF_TOKEN }}"])


def n_masked(rng: random.Random) -> str:
    return rng.choice([f"card •••• {digits(rng, 4)}", f"Incorrect API key provided: sk-proj-****{pick(rng, ALNUM, 4)}",
                       "j***@g***.com", f"+33 6 •• •• •• {digits(rng, 2)}", f"SSN ***-**-{digits(rng, 4)}",
                       f"IBAN DE** **** **** **** **{digits(rng, 2)} {digits(rng, 2)}"])


def n_versions(rng: random.Random) -> str:
    return rng.choice([f"openai=={rng.randint(1, 2)}.{rng.randint(0, 99)}.{rng.randint(0, 9)}",
                       f"langchain-core {rng.choice(['0.3.15', '0.3.28', '1.0.2'])}",
                       f"schema_url https://opentelemetry.io/schemas/1.{rng.randint(20, 37)}.0",
                       f"python 3.11.{rng.randint(0, 12)} linux-x86_64", f"inspect_ai v0.3.{rng.randint(10, 120)}"])


def n_commits(rng: random.Random) -> str:
    return rng.choice([f"git_sha={_hex(rng, 40)}", f"dataset digest sha256:{_hex(rng, 64)}",
                       f"model revision {_hex(rng, 40)}",
                       f"weave ref weave:///acme/evals/object/Dataset:{_hex(rng, 12)}"])


def n_metrics(rng: random.Random) -> str:
    return (f"latency_ms={rng.randint(10, 90000)} tokens_in={rng.randint(1, 9000)} tokens_out={rng.randint(1, 4000)} "
            f"cost_usd={rng.uniform(0, 2):.5f} score={rng.random():.3f}")


SERVICE_LINES = ["Apple Support 1-800-275-2273", "Microsoft support 1-800-642-7676", "HMRC helpline 0300 200 3300",
                 "DVLA 0300 790 6801", "NHS 111", "SNCF 3635", "Deutsche Bahn Service 030 2970",
                 "IRCTC 14646", "Amazon 1-888-280-4331", "Numéro vert 0 800 130 000"]


def n_service_numbers(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"Call our published line: {rng.choice(SERVICE_LINES)}"
    return rng.choice([f"toll-free 1-{rng.choice(['800', '888', '877', '866'])}-{digits(rng, 3)}-{digits(rng, 4)} "
                       "(Acme customer care)", f"Freephone 0800 {digits(rng, 3)} {digits(rng, 4)} (help desk)",
                       f"Kundenservice 0800 {digits(rng, 7)} (kostenfrei)",
                       f"toll free 1800-{digits(rng, 3)}-{digits(rng, 4)} (customer care)"])


def _luhn_bad(rng: random.Random) -> str:
    partial = rng.choice("3456") + digits(rng, 14)
    return partial + str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)


def n_luhn_invalid(rng: random.Random) -> str:
    return rng.choice([f"ref {_luhn_bad(rng)}", f"batch_id={_luhn_bad(rng)}", f"invoice {_luhn_bad(rng)}"])


def n_orders(rng: random.Random) -> str:
    return rng.choice([f"Order #{digits(rng, 3)}-{digits(rng, 7)}-{digits(rng, 7)}", f"ORD-2025-{digits(rng, 6)}",
                       f"order_id={rng.randint(10**5, 10**8)}", f"RMA {pick(rng, UPPER, 2)}{digits(rng, 8)}"])


def n_tracking(rng: random.Random) -> str:
    return rng.choice([f"UPS tracking 1Z{pick(rng, UPPER + string.digits, 6)}{digits(rng, 10)}",
                       f"USPS 9400 {group(digits(rng, 18), 4, ' ')}", f"DHL waybill {digits(rng, 10)}",
                       f"Colissimo 6A{digits(rng, 11)}"])


def n_aws_example(rng: random.Random) -> str:
    return rng.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                       "AccessKeyId: ASIAIOSFODNN7EXAMPLE (from the IAM user guide)"])


def n_uuids(rng: random.Random) -> str:
    return rng.choice([f"run_id={_uuid(rng)}", f"dataset_id: {_uuid(rng)}", f"langfuse trace {_hex(rng, 32)}",
                       f"session {_uuid(rng)} resumed"])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "trace_ids": n_trace_ids, "request_ids": n_request_ids, "css_selectors": n_css, "xpath": n_xpath,
    "element_ids": n_element_ids, "coordinates": n_coordinates, "pixel_sizes": n_pixels,
    "timestamps": n_timestamps, "cache_bust": n_cache_bust, "csrf_names": n_csrf_names,
    "placeholders": n_placeholders, "masked": n_masked, "versions": n_versions, "commit_shas": n_commits,
    "metrics": n_metrics, "service_numbers": n_service_numbers, "luhn_invalid": n_luhn_invalid,
    "orders": n_orders, "tracking": n_tracking, "aws_example": n_aws_example, "uuids": n_uuids,
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), some inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[i % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text, "")
            yield sort, text
