"""User detectors: SQL rules in a YAML file (`tracegym mine failures --rules FILE`).

    rules:
      - name: refund_over_limit
        description: A refund above the policy limit of 500.
        sql: |
          SELECT trace_id, message_idx, arguments AS evidence
          FROM tool_calls
          WHERE name = 'refund' AND CAST(arguments->>'amount' AS DOUBLE) > 500

Each rule's SQL is one SELECT over the store returning `trace_id` and
`evidence`, and optionally `message_idx` and `signature`; other columns are
ignored. Without a `signature` column the evidence is normalised by the same
`tg_signature` macro the built-in detectors use, and rules may call it (and
read `$score_threshold`, `$min_repeats`, `$max_turns`) themselves.

Mistakes are reported before anything is written: YAML and field errors name
the file, the line and the fix; SQL that does not parse, is not a single
SELECT, or lacks the required columns names the rule, its line and DuckDB's
message.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict, Field, field_validator

from tracegym.errors import ConfigError
from tracegym.mining.detectors import DETECTORS, Detector
from tracegym.yamlfile import compose, load_model, node_line

REQUIRED_COLUMNS = ("trace_id", "evidence")
NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_")


class Rule(BaseModel):
    """One user detector."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    """The detector name its findings are filed under: lower-case letters, digits and underscores"""
    description: str = ""
    """What the rule finds, for people reading the file"""
    sql: str = Field(min_length=1)
    """One SELECT returning trace_id and evidence, and optionally message_idx and signature"""
    verdict: bool = False
    """Whether a finding means the trace failed (it then counts as failed in every cluster's failure rate)"""

    @field_validator("name")
    @classmethod
    def _valid_name(cls, name: str) -> str:
        if not name or not name[0].isalpha() or not set(name) <= NAME_CHARS or len(name) > 64:
            suggestion = "".join(c if c in NAME_CHARS else "_" for c in name.lower()).strip("_") or "my_rule"
            raise ValueError(
                f"{name!r} is not a detector name. Fix: use lower-case letters, digits and underscores, starting "
                f"with a letter, e.g. {suggestion!r}"
            )
        return name


class RulesFile(BaseModel):
    """A --rules file: a list of user detectors."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    rules: list[Rule] = Field(min_length=1)
    """The user detectors, each with name, sql and optionally description and verdict"""


@dataclass(frozen=True, slots=True)
class LoadedRule:
    rule: Rule
    where: str  # 'rules.yaml:7', the line of the rule's `sql:`

    def detector(self, columns: list[str]) -> Detector:
        """The rule as a detector whose SQL returns the four columns built-ins return."""
        index = "CAST(message_idx AS INTEGER)" if "message_idx" in columns else "NULL::INTEGER"
        evidence = "CAST(evidence AS VARCHAR)"
        signature = f"coalesce(CAST(signature AS VARCHAR), tg_signature({evidence}))" if "signature" in columns \
            else f"tg_signature({evidence})"
        sql = (
            f"SELECT CAST(trace_id AS VARCHAR) AS trace_id, {index} AS message_idx, {signature} AS signature, "
            f"left({evidence}, 2000) AS evidence\nFROM (\n{_body(self.rule.sql)}\n) AS rule_rows"
        )
        return Detector(self.rule.name, "rule", self.rule.description or f"user rule from {self.where}", sql,
                        verdict=self.rule.verdict, origin=self.where)


def load_rules(path: Path) -> list[LoadedRule]:
    """Read and validate a rules file (not its SQL, which needs a store: see `prepare_rules`)."""
    if not path.is_file():
        raise ConfigError(f"No rules file at {path}. Fix: pass the path of a YAML file with a `rules:` list.")
    parsed, text = load_model(path, RulesFile)
    node = compose(text)  # for the line of each rule in the messages below
    builtin = {d.name for d in DETECTORS}
    seen: set[str] = set()
    loaded = []
    for i, rule in enumerate(parsed.rules):
        line = node_line(node, ("rules", i, "name"))
        if rule.name in builtin:
            raise ConfigError(f"{path}:{line}: rules.{i}.name: {rule.name!r} is a built-in detector. "
                              f"Fix: give the rule another name, e.g. {rule.name + '_custom'!r}.")
        if rule.name in seen:
            raise ConfigError(f"{path}:{line}: rules.{i}.name: a rule named {rule.name!r} comes earlier in the file. "
                              "Fix: give each rule its own name.")
        seen.add(rule.name)
        loaded.append(LoadedRule(rule, f"{path}:{node_line(node, ('rules', i, 'sql'))}"))
    return loaded


def prepare_rules(con: duckdb.DuckDBPyConnection, rules: list[LoadedRule], params: dict[str, Any]) -> list[Detector]:
    """Check each rule's SQL against the store and turn it into a detector (the tg_* macros must be installed)."""
    return [rule.detector(_columns(con, rule, params)) for rule in rules]


def _body(sql: str) -> str:
    return sql.strip().rstrip(";").rstrip()


def _columns(con: duckdb.DuckDBPyConnection, loaded: LoadedRule, params: dict[str, Any]) -> list[str]:
    rule, where = loaded.rule, loaded.where
    try:
        statements = con.extract_statements(_body(rule.sql))
    except duckdb.Error as e:
        raise ConfigError(f"{where}: rule {rule.name!r}: the SQL does not parse: {e}. "
                          "Fix: correct the SQL; try it with `tracegym sql`.") from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise ConfigError(f"{where}: rule {rule.name!r}: the SQL must be one SELECT (found "
                          f"{', '.join(s.type.name for s in statements) or 'nothing'}). "
                          "Fix: write a single SELECT (or WITH … SELECT) without a trailing second statement.")
    body = _body(rule.sql)
    used = {k: v for k, v in params.items() if f"${k}" in body}
    try:
        described = con.execute(f"DESCRIBE (\n{body}\n)", used).fetchall()
    except duckdb.Error as e:
        raise ConfigError(f"{where}: rule {rule.name!r}: DuckDB cannot run the SQL: {e}. "
                          "Fix: correct the SQL; the tables are sources, traces, messages, tool_calls, scores "
                          "(`tracegym sql \"DESCRIBE tool_calls\"` lists a table's columns).") from None
    columns = [row[0] for row in described]
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        hints = "".join(f" Is {close[0]!r} meant to be {c!r}?" for c in missing
                        if (close := difflib.get_close_matches(c, columns, n=1)))
        raise ConfigError(f"{where}: rule {rule.name!r}: the SQL returns no {' or '.join(missing)} column "
                          f"(it returns {', '.join(columns)}).{hints} Fix: select trace_id and evidence "
                          f"(optionally message_idx and signature), e.g. `SELECT trace_id, result AS evidence …`.")
    return columns
