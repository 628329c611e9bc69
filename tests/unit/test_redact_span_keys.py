"""An OTLP span's attribute keys are names, not keys: OpenInference flattens lists into them with indices
(`llm.input_messages.0.message.role`), and OTLP JSON writes each as `{"key": …, "value": …}`."""

from __future__ import annotations

import json

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def test_flattened_attribute_names_under_key_are_left_and_values_still_read() -> None:
    attributes = [{"key": f"llm.input_messages.{i}.message.{part}", "value": {"stringValue": text}}
                  for i, (part, text) in enumerate([("role", "user"), ("content", "my api key is sk-proj-"
                                                                                     "Vx9mQ2pLz77aB3cD4eF5gH6iJ7kL8mN9")])]
    span = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "llm", "attributes": attributes}]}]}]})
    assert [f.value for f in DETECTOR.find(span)] == ["sk-proj-Vx9mQ2pLz77aB3cD4eF5gH6iJ7kL8mN9"]
    assert DETECTOR.find('{"key": "llm.output_messages.12.message.tool_calls.0.tool_call.id", "value": {}}') == []
