"""The built-in failure detectors: each a named, documented SQL rule over the store.

Every detector is one SELECT returning the columns
`trace_id, message_idx, signature, evidence` (one row per finding). DuckDB does
the work, so mining a large store costs a few scans, not a Python loop per
trace. Detectors may call the macros from `signature.py` (`tg_signature`,
`tg_error_line`), read the thresholds of `MineConfig` as `$name` parameters,
and read the temporary tables of the shared scans they list (`scans.py`): the
users' messages and the run metadata are read once for all their detectors.

All but one look at one trace at a time. They name the tables they read as
`@traces`, `@messages`, `@tool_calls` and `@scores`, which `detection.py`
points at the whole store or at copies of just the traces it has not yet
seen (their findings are made once per trace, at ingest). runaway_turns
compares a trace with the others of its format, so it reads the whole store
each time the store is mined.

Where a text recurs across traces (errors, corrections, task metadata), the
expensive expressions (signatures, JSON) run once per distinct text and are
joined back; `benchmarks/mine.py` prints what each detector costs.

Signatures built from text go through `tg_signature` (numbers, ids, paths,
quoted values and amounts stripped); signatures that name a kind of event are
written out in full ("unneeded hand-off: transfer_to_human_agents").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tracegym.mining.json_errors import candidate_sql as json_error_candidate
from tracegym.mining.scans import RUN_METADATA, TOOL_NAMES, USER_TEXTS, Scan, over

Category = Literal["outcome", "tool_errors", "protocol_errors", "loops", "give_ups", "user_signals", "rule"]


@dataclass(frozen=True, slots=True)
class Detector:
    name: str
    category: Category
    description: str
    sql: str
    verdict: bool = False
    """A finding means the trace failed; failure rates count these traces as failed."""
    origin: str | None = None
    """Where a user rule was written ('rules.yaml:7'); None for the built-ins."""
    scans: tuple[Scan, ...] = ()
    """Shared scans the SQL reads (their temporary tables exist while it runs)."""
    per_trace: bool = True
    """Its findings for a trace depend on that trace alone, so they are made once, when the trace is new."""
    catch_all: bool = False
    """Its findings say that a trace failed, not where or how (an outcome, a score, a label): its clusters rank after
    the specific ones, which name what to fix."""

    def parameters(self) -> set[str]:
        """The `$name` parameters the SQL reads."""
        return set(re.findall(r"\$([a-z_]+)", self.sql))

    def over(self, tables: dict[str, str]) -> str:
        """The SQL with each `@table` it reads replaced by `tables[table]`."""
        return over(self.sql, tables)


# The harness correcting the agent's output format: mini-swe-agent, SWE-agent (text and
# function-calling modes) and OpenAI-style tool-call parsers. Anchored at the start of the
# message, where harnesses put it: an anchored RE2 pattern rejects most messages at their first
# character, so the whole messages table is scanned quickly.
HARNESS_CORRECTION = (
    r"(?i)^\s*(?:error:?\s*)?(?:please always provide exactly one action|your output was not formatted correctly"
    r"|your bash command contained syntax errors and was not executed|your last output did not use any tool calls"
    r"|invalid (?:tool|function)[ _-]?calls?"
    r"|(?:could not|failed to|unable to) parse (?:your |the )?(?:action|response|output|(?:tool|function)[ _-]?calls?"
    r"|arguments)|invalid json (?:in|for) (?:the )?(?:tool|function)"
    r"|no (?:tool|function)[ _-]?calls? (?:were |was )?found)"
)

# A harness reporting that a command ran out of time, where it did not flag the result as an error.
TIMEOUT_MESSAGE = r"(?is)^\s*(?:execution timed out|timed out|the (?:last )?command .{0,500}?timed out)"

# Tools whose call hands the conversation to a person.
HANDOFF_TOOL = r"(?i)(transfer_to_human|human_agent|escalat|hand_?off|handover)"

# Tools whose call puts a person on the case, for gave_up: wider than HANDOFF_TOOL, as here a miss only costs a finding.
HANDOFF_LIKE_TOOL = r"(?i)(hand_?off|hand_?over|escalat|transfer|human|agent|ticket)"

# Apostrophes as people and models type them.
_APOS = "['\u2019\u2018\u02bc`\u00b4]"
_CANT = rf"can(?:{_APOS}?t| ?not)"
# The agent saying it cannot do what it was asked.
CANNOT_HELP = (
    rf"(?i)\b(?:{_CANT} (?:help|assist)|(?:unable|not able) to|nothing (?:(?:else|more) )?(?:that )?I can do"
    rf"|I(?:{_APOS}?m| am) afraid I {_CANT}|I {_CANT} (?:do|process|handle|issue|make|approve|complete|provide|offer)"
    rf"|(?:won{_APOS}?t|will not) be able to|not (?:authori[sz]ed|permitted|allowed) to)\b"
)
# The agent pointing the customer to a person or another channel.
HUMAN_OFFER = (
    r"(?i)\b(?:colleagues?|human|representatives?|specialists?|supervisors?|managers?|support team|support staff"
    r"|customer (?:service|support|care)|(?:live|real|support) (?:agent|person)|escalat\w*|contact us|call us|email us"
    r"|reach out to|transfer(?:ring)? you|connect you)\b"
)

# Exit statuses of runs that ended because the agent finished, not because a limit or an error stopped them.
NORMAL_EXIT = r"(?i)^\s*(submitted|agent_stop|user_stop|stop|end_turn|completed?|finished|success|done)\s*$"

# A user turning the agent down or correcting it, at the start of their message.
USER_CORRECTION = (
    r"(?i)^\s*(?:(?:hmm|sorry|wait|well|oh|um|ah),?\s+)?(?:no,? (?:that.s|that is|it.s|it is) not"
    r"|(?:that.s|that is|this is) not what|not what i (?:asked|wanted|meant|said)"
    r"|i (?:already|just) (?:said|told|asked|mentioned|gave)|as i (?:said|mentioned|told you)|i said\b"
    r"|you misunderstood|(?:that.s|that is) (?:wrong|incorrect)|actually,? i (?:meant|mean|want|wanted|need|said)"
    r"|i meant\b|let me repeat|once again|no,? i (?:really )?(?:don.t|do not) want)"
)

NEGATIVE_LABELS = (
    "('fail', 'failed', 'failure', 'incorrect', 'wrong', 'bad', 'negative', 'thumbs_down', 'thumbs-down', "
    "'dislike', 'no', 'false', 'unhelpful')"
)


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


OUTCOME = Detector(
    "outcome",
    "outcome",
    "The trace failed: its outcome is 'failure' (τ-bench reward below 1, an unresolved SWE-bench instance, …), "
    "or a SWE-bench `resolved` score is 0. The evidence lists the environment scores below 1.",
    """
    SELECT t.trace_id, NULL::INTEGER AS message_idx,
           CASE WHEN s.unresolved THEN 'SWE-bench instance not resolved' ELSE 'trace outcome: failure' END AS signature,
           'outcome=' || coalesce(t.outcome, '∅') || coalesce('; ' || s.low, '') AS evidence
    FROM @traces t
    LEFT JOIN (
        SELECT trace_id,
               string_agg(name || '=' || round(value, 3), ', ' ORDER BY name) FILTER (value < 1) AS low,
               bool_or(name = 'resolved' AND value = 0) AS unresolved
        -- Only scores below 1 are listed or mean unresolved: the others need not be grouped.
        FROM @scores WHERE kind = 'environment' AND value < 1 GROUP BY trace_id
    ) s USING (trace_id)
    WHERE t.outcome = 'failure' OR s.unresolved
    """,
    verdict=True,
    catch_all=True,
)

LOW_SCORE = Detector(
    "low_score",
    "outcome",
    "An eval score below --score-threshold, or labelled as a failure (fail, incorrect, wrong, …). "
    "Scores are taken to lie in [0, 1]; set the threshold for other scales.",
    f"""
    SELECT trace_id, NULL::INTEGER AS message_idx,
           'eval score ' || name || ' below ' || $score_threshold AS signature,
           name || '=' || coalesce(CAST(value AS VARCHAR), '∅') || coalesce(' (' || label || ')', '')
               || coalesce(': ' || left(comment, 500), '') AS evidence
    FROM @scores
    WHERE kind = 'eval' AND (value < $score_threshold OR lower(label) IN {NEGATIVE_LABELS})
    """,
    verdict=True,
    catch_all=True,
)

FAILING_TESTS = Detector(
    "failing_tests",
    "outcome",
    "SWE-bench tests that fail after the agent's patch, from the evaluation report in the trace metadata: "
    "target tests still failing (FAIL_TO_PASS), or tests the patch broke (PASS_TO_PASS). One finding per trace "
    "and group, not per test: test names are specific to their repository and would each form a cluster of one; "
    "the evidence names the tests.",
    """
    WITH groups AS (
        SELECT trace_id, 'FAIL_TO_PASS' AS grp,
               json_extract_string(tests_status, '$.FAIL_TO_PASS.failure[*]') AS failing,
               json_array_length(tests_status, '$.FAIL_TO_PASS.success') AS passing
        FROM tg_run_metadata WHERE tests_status IS NOT NULL
        UNION ALL
        SELECT trace_id, 'PASS_TO_PASS', json_extract_string(tests_status, '$.PASS_TO_PASS.failure[*]'),
               json_array_length(tests_status, '$.PASS_TO_PASS.success')
        FROM tg_run_metadata WHERE tests_status IS NOT NULL
    )
    SELECT trace_id, NULL::INTEGER AS message_idx,
           CASE grp WHEN 'FAIL_TO_PASS' THEN 'target tests still fail (FAIL_TO_PASS)'
                    ELSE 'patch broke passing tests (PASS_TO_PASS)' END AS signature,
           grp || ': ' || len(failing) || ' of ' || (len(failing) + coalesce(passing, 0)) || ' failing: '
               || array_to_string(failing[1:10], ', ') || CASE WHEN len(failing) > 10 THEN ', …' ELSE '' END AS evidence
    FROM groups WHERE len(failing) > 0
    """,
    scans=(RUN_METADATA,),
    verdict=True,
    catch_all=True,
)

TOOL_ERROR = Detector(
    "tool_error",
    "tool_errors",
    "A tool result that is an error: flagged is_error at ingest (results starting 'Error', Python tracebacks, "
    "errors the format itself marks), a non-zero exit code, a harness timeout message, or a backend's JSON error "
    "response ({\"error\": {\"code\": 504, \"message\": …}}, {\"status\": \"error\"}, {\"ok\": false}, "
    "{\"success\": false}, an HTTP status of 400 to 599, GraphQL errors). The signature is the line naming the "
    "error (a traceback's exception line), or the JSON error's message, normalised, or 'timeout'; the tool's name "
    "is in the evidence, not the signature, so one error family raised by several tools is one cluster.",
    f"""
    WITH calls AS (
        SELECT * FROM (
            SELECT trace_id, coalesce(result_message_idx, message_idx) AS message_idx, name, result, exit_code,
                   is_error OR coalesce(exit_code, 0) <> 0 OR regexp_matches(result, {_q(TIMEOUT_MESSAGE)}) AS flagged
            FROM @tool_calls)
        -- JSON error responses are told apart per distinct text below; this cheap test keeps only candidates.
        WHERE flagged OR {json_error_candidate('result')}
    ), texts AS (
        -- Normalised once per distinct text: the same error text recurs across traces. A candidate that no call
        -- flagged and that is no JSON error is not an error: its error line is not looked for.
        SELECT result, regexp_matches(left(result, 300), '(?i)\\btimed out\\b') AS timed_out, json_message,
               CASE WHEN regexp_full_match(json_message, 'HTTP [45][0-9][0-9]') THEN json_message
                    WHEN json_message = '' THEN 'error response with no message'
                    WHEN json_message IS NOT NULL THEN tg_signature(json_message)
                    WHEN flagged THEN tg_signature(tg_error_line(tg_unwrap(result))) END AS line
        FROM (SELECT result, bool_or(flagged) AS flagged, tg_json_error(result) AS json_message
              FROM calls GROUP BY result)
    )
    SELECT trace_id, message_idx,
           CASE WHEN timed_out THEN 'timeout'
                WHEN result IS NULL OR trim(result) = '' THEN
                    'error with no output' || coalesce(' (exit code ' || nullif(exit_code, 0) || ')', '')
                WHEN coalesce(exit_code, 0) <> 0 THEN
                    'exit code ' || exit_code || coalesce(': ' || nullif(line, ''), '')
                ELSE coalesce(nullif(line, ''), 'error') END AS signature,
           name || coalesce(' exit ' || exit_code, '') || ': ' || coalesce(left(result, 1500), '∅') AS evidence
    FROM calls LEFT JOIN texts USING (result)
    WHERE flagged OR json_message IS NOT NULL
    """,
)

FORMAT_ERROR = Detector(
    "format_error",
    "protocol_errors",
    "The harness had to correct the agent's output format: a user message or tool result that opens with a "
    "correction (\"Please always provide EXACTLY ONE action\", \"Your output was not formatted correctly\", "
    "\"Failed to parse tool call\"), or a tool call whose arguments are not valid JSON.",
    f"""
    WITH corrections AS (
        SELECT m.trace_id, m.idx AS message_idx, u.text
        FROM (SELECT content AS text, unnest(rowids) AS row_id FROM tg_user_texts
              WHERE regexp_matches(content, {_q(HARNESS_CORRECTION)})) u
        JOIN @messages m ON m.rowid = u.row_id
        UNION ALL
        -- Tool messages are read through tool_calls.result: the same text in a much narrower column.
        SELECT trace_id, coalesce(result_message_idx, message_idx), result
        FROM @tool_calls WHERE regexp_matches(result, {_q(HARNESS_CORRECTION)})
    ), signatures AS (
        -- The signature (a chain of regexes) once per distinct text.
        SELECT text, tg_signature(regexp_extract(text, '(?m)^\\s*(\\S[^\\n]*)', 1)) AS signature
        FROM (SELECT DISTINCT text FROM corrections)
    )
    SELECT trace_id, message_idx, signature, left(text, 1500) AS evidence
    FROM corrections JOIN signatures USING (text)
    UNION ALL
    -- Arguments that did not parse are stored as a JSON string rather than an object.
    SELECT trace_id, message_idx, 'tool-call arguments are not valid JSON' AS signature,
           name || ' arguments: ' || left(arguments->>'$', 1500) AS evidence
    FROM @tool_calls WHERE starts_with(CAST(arguments AS VARCHAR), '"')
    """,
    scans=(USER_TEXTS,),
)

REPEATED_CALL = Detector(
    "repeated_call",
    "loops",
    "The same tool call (same name and arguments) that got the same result, made --min-repeats times or more in "
    "one trace, or retried unchanged after it returned an error. One finding per repeated call, at its second "
    "occurrence.",
    """
    WITH calls AS (
        SELECT trace_id, message_idx, name, CAST(arguments AS VARCHAR) AS args, result, is_error
        FROM @tool_calls
        -- A cheap first pass on one hash of the short columns: results are compared only for calls made twice.
        WHERE hash(trace_id, name, arguments) IN (
            SELECT hash(trace_id, name, arguments) FROM @tool_calls GROUP BY ALL HAVING count(*) >= 2)
    )
    SELECT trace_id, list(message_idx ORDER BY message_idx)[2] AS message_idx,
           CASE WHEN count(*) >= $min_repeats THEN 'repeated call: ' || name || ' with identical arguments and result'
                ELSE 'retried unchanged after an error: ' || name END AS signature,
           name || '(' || left(args, 300) || ') called ' || count(*) || ' times with the same result, at messages '
               || array_to_string(list(message_idx ORDER BY message_idx), ', ')
               || CASE WHEN bool_or(is_error) THEN '; result: ' || coalesce(left(any_value(result), 300), '∅')
                       ELSE '' END
               AS evidence
    FROM calls
    GROUP BY trace_id, name, args, hash(result)
    HAVING count(*) >= $min_repeats OR (count(*) >= 2 AND bool_or(is_error))
    """,
)

RUNAWAY_TURNS = Detector(
    "runaway_turns",
    "loops",
    "More assistant turns than --max-turns, or, when that is not set, more than three times the median number of "
    "assistant turns of traces of the same format.",
    # The turn counts were taken once per trace when it was detected (detection.py); traces with none are
    # left out of the median, as they never had a turn to run away with.
    """
    WITH limits AS (
        SELECT format, coalesce($max_turns, 3 * median(turns)) AS max_turns
        FROM detected WHERE turns > 0 GROUP BY format
    )
    SELECT trace_id, NULL::INTEGER AS message_idx,
           CASE WHEN $max_turns IS NULL THEN 'runaway: over 3x the median turns of its format'
                ELSE 'runaway: over ' || $max_turns || ' assistant turns' END AS signature,
           turns || ' assistant turns; the limit for ' || format || ' traces is '
               || round(max_turns, 1) AS evidence
    FROM detected JOIN limits USING (format)
    WHERE turns > max_turns
    """,
    per_trace=False,
)

HANDOFF = Detector(
    "handoff",
    "give_ups",
    "The agent handed the conversation to a person (a tool named like transfer_to_human_agents, escalate, "
    "handoff). Where the trace's task lists gold actions (τ-bench `metadata.task.actions`), only hand-offs the "
    "gold actions do not include are findings ('unneeded hand-off'); without gold actions every hand-off is.",
    f"""
    WITH calls AS (
        SELECT trace_id, message_idx, name, CAST(arguments AS VARCHAR) AS args
        FROM @tool_calls
        -- The pattern is matched once per tool name, not once per call.
        WHERE name IN (SELECT name FROM tg_tool_names WHERE regexp_matches(name, {_q(HANDOFF_TOOL)}))
    ), golds AS (
        -- Parsed once per distinct metadata of the traces that handed off.
        SELECT metadata, CASE WHEN json_type(metadata, '$.task.actions') = 'ARRAY'
                              THEN json_extract_string(metadata, '$.task.actions[*].name') END AS gold
        FROM (SELECT DISTINCT metadata FROM @traces WHERE trace_id IN (SELECT trace_id FROM calls))
    ), traced AS (
        SELECT c.*, g.gold FROM calls c JOIN @traces t USING (trace_id) LEFT JOIN golds g ON g.metadata = t.metadata
    )
    SELECT trace_id, message_idx,
           CASE WHEN gold IS NULL THEN 'hand-off: ' || name
                ELSE 'unneeded hand-off: ' || name || ' (not in the gold actions)' END AS signature,
           name || '(' || left(args, 1000) || '); '
               || CASE WHEN gold IS NULL THEN 'no gold actions to compare with'
                       WHEN len(gold) = 0 THEN 'the gold actions are empty: nothing needed a person'
                       ELSE 'gold actions: ' || array_to_string(gold, ', ') END AS evidence
    FROM traced
    WHERE gold IS NULL OR NOT list_contains(gold, name)
    """,
    scans=(TOOL_NAMES,),
)

GAVE_UP = Detector(
    "gave_up",
    "give_ups",
    "The agent's last reply says it cannot help (\"I can't help with that\", \"I'm unable to\", \"there is nothing "
    "I can do\", any apostrophe, any case), and it neither called a tool that puts a person on the case (a name "
    "with handoff, escalate, transfer, human, agent or ticket in it) nor pointed to one in that reply (a colleague, "
    "a human agent, the support team, \"contact us at\"). Not a verdict: a refusal the policy demands is not a "
    "failure.",
    f"""
    WITH last AS (
        -- Each trace's last assistant message, found without reading text; its text is read for it alone.
        SELECT arg_max(rowid, idx) AS row_id FROM @messages WHERE role = 'assistant' GROUP BY trace_id
    ), said AS (
        SELECT m.trace_id, m.idx, m.content FROM @messages m JOIN last ON m.rowid = last.row_id
        WHERE regexp_matches(left(m.content, 4000), {_q(CANNOT_HELP)})
          AND NOT regexp_matches(left(m.content, 4000), {_q(HUMAN_OFFER)})
    )
    SELECT trace_id, idx AS message_idx, 'gave up: said it cannot help and offered no person' AS signature,
           left(content, 1000) AS evidence
    FROM said
    ANTI JOIN (SELECT DISTINCT trace_id FROM @tool_calls
               WHERE name IN (SELECT name FROM tg_tool_names WHERE regexp_matches(name, {_q(HANDOFF_LIKE_TOOL)})))
        USING (trace_id)
    """,
    scans=(TOOL_NAMES,),
)

TERMINATED = Detector(
    "terminated",
    "give_ups",
    "The run was stopped rather than finished: its exit status (metadata exit_status, termination_reason or "
    "stop_reason) is not a normal completion, e.g. max steps, cost or context limits, too many format errors.",
    f"""
    SELECT trace_id, NULL::INTEGER AS message_idx, 'terminated: ' || tg_signature(status) AS signature,
           'the run ended with status ' || status AS evidence
    FROM tg_run_metadata
    WHERE status IS NOT NULL AND NOT regexp_matches(status, {_q(NORMAL_EXIT)})
    """,
    scans=(RUN_METADATA,),
)

EMPTY_SUBMISSION = Detector(
    "empty_submission",
    "give_ups",
    "The run has a submission field (SWE-agent, mini-swe-agent) and it is empty: the agent submitted no patch.",
    """
    SELECT trace_id, NULL::INTEGER AS message_idx, 'empty submission' AS signature,
           'exit status ' || coalesce(exit_status, '∅') || '; the submission is empty' AS evidence
    FROM tg_run_metadata
    WHERE empty_submission
    """,
    scans=(RUN_METADATA,),
)

NEGATIVE_FEEDBACK = Detector(
    "negative_feedback",
    "user_signals",
    "A human feedback score below --score-threshold or labelled negative (thumbs_down, bad, incorrect, …).",
    f"""
    SELECT trace_id, NULL::INTEGER AS message_idx, 'negative feedback: ' || name AS signature,
           name || '=' || coalesce(CAST(value AS VARCHAR), '∅') || coalesce(' (' || label || ')', '')
               || coalesce(': ' || left(comment, 500), '') AS evidence
    FROM @scores
    WHERE kind = 'human' AND (value < $score_threshold OR lower(label) IN {NEGATIVE_LABELS})
    """,
    verdict=True,
    catch_all=True,
)

USER_REPEAT = Detector(
    "user_repeat",
    "user_signals",
    "The user repeats an earlier message of theirs (the same text, ignoring case and a final . ! or ?; 20 "
    "characters or more), or opens a message by correcting or turning down the agent "
    "(\"that's not what I asked\", \"actually, I meant\", \"no, I don't want\"). Harness corrections written "
    "as user messages are left to format_error.",
    f"""
    WITH said AS (
        -- Each distinct text of a user message once (see scans.py), not each message.
        SELECT content, rowids, trace_keys, regexp_matches(content, {_q(USER_CORRECTION)}) AS corrects,
               -- DuckDB's trim functions are slow on long columns; a final . ! or ? is cut by slicing.
               CASE WHEN length(content) >= 20 THEN lower(
                   CASE WHEN suffix(content, '.') OR suffix(content, '!') OR suffix(content, '?') THEN content[:-2]
                        ELSE content END) END AS text_key
        FROM tg_user_texts
        WHERE length(content) <= 2000 AND NOT regexp_matches(content, {_q(HARNESS_CORRECTION)})
    ), keys AS (
        -- Texts that read the same and that some trace holds twice, told apart by integers alone (the hash
        -- of the text and the hashed trace ids) without reading a message. A hash collision can only add a
        -- candidate, which the grouping by trace below then drops.
        SELECT text_hash FROM (SELECT hash(text_key) AS text_hash, unnest(trace_keys) AS trace_key
                               FROM said WHERE text_key IS NOT NULL)
        GROUP BY text_hash, trace_key HAVING count(*) >= 2
    ), candidates AS (
        SELECT text_key, content, unnest(rowids) AS row_id FROM said
        WHERE text_key IS NOT NULL AND hash(text_key) IN (SELECT text_hash FROM keys)
    ), repeated AS (
        SELECT m.trace_id, list(m.idx ORDER BY m.idx) AS idxs, arg_min(c.content, m.idx) AS content
        FROM candidates c JOIN @messages m ON m.rowid = c.row_id
        GROUP BY c.text_key, m.trace_id HAVING count(*) >= 2
    )
    SELECT trace_id, unnest(idxs[2:]) AS message_idx, 'user repeats an earlier message' AS signature,
           'repeats message ' || idxs[1] || ': ' || left(content, 500) AS evidence
    FROM repeated
    UNION ALL
    SELECT m.trace_id, m.idx, 'user corrects or turns down the agent', left(c.content, 500)
    FROM (SELECT content, unnest(rowids) AS row_id FROM said WHERE corrects) c JOIN @messages m ON m.rowid = c.row_id
    """,
    scans=(USER_TEXTS,),
)

DETECTORS: tuple[Detector, ...] = (
    OUTCOME, LOW_SCORE, FAILING_TESTS, TOOL_ERROR, FORMAT_ERROR, REPEATED_CALL, RUNAWAY_TURNS, HANDOFF, GAVE_UP,
    TERMINATED, EMPTY_SUBMISSION, NEGATIVE_FEEDBACK, USER_REPEAT,
)
PER_TRACE: tuple[Detector, ...] = tuple(d for d in DETECTORS if d.per_trace)
