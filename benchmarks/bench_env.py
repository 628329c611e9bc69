"""The RL benchmarks' environment: a weather tool (imported by the tools harness as `bench_env:<name>`) and a
reward (imported by a `kind: python` eval).

The tool answers after a fixed wall-clock latency, as a tool that calls a remote API does.
"""

from __future__ import annotations

import asyncio


async def _weather(city: str, latency_s: float) -> str:
    await asyncio.sleep(latency_s)
    return f"Sunny, 21 C in {city}."


async def get_weather_200ms(city: str) -> str:
    """Get the current weather in a city."""
    return await _weather(city, 0.2)


async def get_weather_instant(city: str) -> str:
    """Get the current weather in a city."""
    return await _weather(city, 0.0)


def even_words(answer: str | None) -> float:
    """1 when the reply has an even number of words: a reward about half of any model's replies earn, so
    GRPO groups have variance and every step trains."""
    return 1.0 if len((answer or "").split()) % 2 == 0 else 0.0
