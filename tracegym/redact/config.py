"""Redaction settings: which rules run, the team's own patterns, allow-listed values, how pseudonyms are made.

    # redact.yaml
    version: 1
    rules:                      # the team's own detectors, beside the built-in ones
      - name: employee_id
        label: EMPLOYEE
        pattern: 'EMP-\\d{6}'
    disable: [ipv4]             # built-in rules to turn off
    allow:                      # never redacted, wherever they appear
      values: [support@example.com]
      patterns: ['.*@ourcompany\\.example']
    pseudonyms:
      scope: trace              # trace: <EMAIL_1> counts restart in each trace; store: one numbering store-wide
      hmac_key_env: REDACT_KEY  # keyed mode: <EMAIL_3f9a...> from HMAC-SHA256(key, value), stable everywhere
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tracegym.errors import ConfigError


class UserRule(BaseModel):
    """A team's own detector."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    """The rule's name in reports and `redact check` output (lower case, digits, underscores)."""
    label: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$")
    """The placeholder type: values become <LABEL_1>, <LABEL_2>, ..."""
    pattern: str
    """A regular expression in the syntax RE2 and Python share (no look-arounds or back-references); a named
    group `v` marks the part to redact, the rest of the match being context."""
    description: str = ""
    """What it finds, for the report."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern, re.ASCII)
        except re.error as e:
            raise ValueError(f"not a valid regular expression: {e}") from None
        _check_re2(pattern)
        return pattern


def _check_re2(pattern: str) -> None:
    """Raise ValueError unless RE2 (the engine that prefilters texts for the rules) accepts `pattern`."""
    import re2

    from tracegym.redact.passes import compiled

    try:
        compiled(pattern)
    except re2.error as e:
        why = e.args[0].decode() if e.args and isinstance(e.args[0], bytes) else str(e)
        raise ValueError(f"RE2 cannot run it ({why}); write it without look-arounds or back-references") from None


class AllowList(BaseModel):
    """Values never redacted, wherever they appear."""

    model_config = ConfigDict(extra="forbid")
    values: list[str] = []
    """Exact values (an e-mail, an IP) that stay as they are."""
    patterns: list[str] = []
    """Regular expressions; a finding whose whole value matches one stays."""

    @field_validator("patterns")
    @classmethod
    def _compile(cls, patterns: list[str]) -> list[str]:
        for p in patterns:
            try:
                re.compile(p)
            except re.error as e:
                raise ValueError(f"{p!r} is not a valid regular expression: {e}") from None
        return patterns


class Pseudonyms(BaseModel):
    """How found values are replaced."""

    model_config = ConfigDict(extra="forbid")
    scope: Literal["trace", "store"] = "trace"
    """trace: the same value gets the same placeholder within a trace, numbers restarting in each trace;
    store: one numbering across the whole store (kept as salted digests in the store, never the values)."""
    hmac_key_env: str | None = None
    """An environment variable holding a secret key: placeholders become <EMAIL_3f9a2c1b7e> from
    HMAC-SHA256(key, type and value), the same in every trace, store and ingest, and nothing is stored."""


class RedactConfig(BaseModel):
    """What `tracegym ingest --redact`, `tracegym redact` and `redact check` detect and how they replace it."""

    model_config = ConfigDict(extra="forbid")
    version: Literal[1] = 1
    """The file format's version."""
    rules: list[UserRule] = []
    """The team's own detectors, run beside the built-in ones."""
    disable: list[str] = []
    """Names of built-in rules not to run."""
    allow: AllowList = AllowList()
    """Values that are never redacted."""
    pseudonyms: Pseudonyms = Pseudonyms()
    """How values are replaced."""

    def hmac_key(self) -> bytes | None:
        """The key of keyed mode, read from its environment variable; a ConfigError when that is unset."""
        name = self.pseudonyms.hmac_key_env
        if name is None:
            return None
        key = os.environ.get(name)
        if not key:
            raise ConfigError(f"pseudonyms.hmac_key_env names {name}, which is not set. Fix: export {name}=<a "
                              "long random secret> (the same one every time, for stable pseudonyms).")
        return key.encode()

    def fingerprint(self) -> str:
        """A short hash of the settings (never of the key), recorded with each redaction."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def load_redact_config(path: Path | None) -> RedactConfig:
    """The settings in `path`, or the defaults (every built-in rule, per-trace numbering) when None."""
    if path is None:
        return RedactConfig()
    from tracegym.redact.rules import BUILTIN_RULES
    from tracegym.yamlfile import load_model

    config, _ = load_model(path, RedactConfig)
    known = {r.name for r in BUILTIN_RULES}
    for name in config.disable:
        if name not in known:
            from tracegym.errors import did_you_mean

            raise ConfigError(f"{path}: disable names {name!r}, which is no built-in rule.{did_you_mean(name, known)}")
    clash = known & {r.name for r in config.rules}
    if clash:
        raise ConfigError(f"{path}: rule {sorted(clash)[0]!r} has a built-in rule's name. Fix: rename it.")
    return config
