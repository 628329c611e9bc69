"""One module per trace format. `ADAPTERS` lists them in detection order."""

from __future__ import annotations

from tracegym.ingest.adapters.anthropic import AnthropicAdapter
from tracegym.ingest.adapters.atif import AtifAdapter
from tracegym.ingest.adapters.base import Adapter
from tracegym.ingest.adapters.generic import GenericAdapter
from tracegym.ingest.adapters.langfuse import LangfuseAdapter
from tracegym.ingest.adapters.langsmith import LangSmithAdapter
from tracegym.ingest.adapters.mini_swe_agent import MiniSweAgentAdapter
from tracegym.ingest.adapters.mlflow import MlflowAdapter
from tracegym.ingest.adapters.openai_chat import OpenAIChatAdapter
from tracegym.ingest.adapters.openai_responses import OpenAIResponsesAdapter
from tracegym.ingest.adapters.openhands import OpenHandsAdapter
from tracegym.ingest.adapters.openinference import OpenInferenceAdapter
from tracegym.ingest.adapters.otel_genai import OtelGenAIAdapter
from tracegym.ingest.adapters.swe_agent import SweAgentAdapter
from tracegym.ingest.adapters.swebench import SweBenchCompanionAdapter
from tracegym.ingest.adapters.tau2_bench import Tau2BenchAdapter
from tracegym.ingest.adapters.tau_bench import TauBenchAdapter

# Most specific first: detection asks each in turn and takes the first that claims the file.
ADAPTERS: list[Adapter] = [
    TauBenchAdapter(),
    Tau2BenchAdapter(),
    AtifAdapter(),
    OpenInferenceAdapter(),
    OtelGenAIAdapter(),
    MlflowAdapter(),
    LangfuseAdapter(),
    LangSmithAdapter(),
    MiniSweAgentAdapter(),
    SweAgentAdapter(),
    OpenHandsAdapter(),
    SweBenchCompanionAdapter(),
    # Plain API logs last: their shapes (a `messages` list, a request/response pair) hide inside richer formats.
    AnthropicAdapter(),
    OpenAIResponsesAdapter(),
    OpenAIChatAdapter(),
    GenericAdapter(),  # never claims a file; only --format generic
]


def adapter_names() -> list[str]:
    return [a.name for a in ADAPTERS]


def get_adapter(name: str) -> Adapter:
    from tracegym.errors import IngestError, did_you_mean

    for adapter in ADAPTERS:
        if adapter.name == name:
            return adapter
    raise IngestError(
        f"Unknown format {name!r}.{did_you_mean(name, adapter_names())} "
        f"Known formats: {', '.join(adapter_names())}."
    )
