"""evals.yaml: the evals a team already runs, declared once, each turned into a scorer.

```yaml
version: 1
evals:
  - name: gold_actions
    kind: tool_calls
    expected_from: metadata.task.actions
```
Each entry's `kind` picks its scorer (`tracegym.evals.scorers`); `weighted`
combines other entries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tracegym.errors import ConfigError, did_you_mean
from tracegym.evals.scorers.nofollow import inside_parts
from tracegym.yamlfile import compose, load_model, node_line

_NAME = r"^[A-Za-z0-9_.-]+$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class AppliesTo(_Strict):
    """Which tasks an eval is bound to when a task set is generated."""

    formats: list[str] | None = None
    """Source trace formats (e.g. tau-bench); None means every format."""
    harnesses: list[str] | None = None
    """Harnesses (replay, shell, chat, proxy); None means every harness."""
    by_default: bool = True
    """Bound to the tasks it matches when `tasks generate` names no --eval; false: only when named with --eval, and
    then still only to the tasks it matches (an eval meant for some formats, chosen instead of the default ones)."""


class _Eval(_Strict):
    name: str = Field(pattern=_NAME)
    """A unique name; tasks and `evals check --eval` refer to it."""
    description: str = ""
    """What the eval measures, for people reading the file."""
    weight: float = Field(1.0, gt=0)
    """This eval's weight when a task is bound to several evals."""
    applies_to: AppliesTo | None = None
    """Tasks that `tasks generate` binds this eval to by default; omitted means only when named with --eval."""
    timeout_s: float = Field(60.0, gt=0)
    """Longest one scoring may take (python, command and judge evals); past it the trajectory gets a scorer
    error."""


class PythonEval(_Eval):
    kind: Literal["python"]
    function: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    """The eval function as `package.module:function`."""
    python_path: list[str] = []
    """Folders (relative to evals.yaml) to put on sys.path before importing the module."""
    arguments: dict[str, str] = {}
    """Keyword argument -> trajectory path (`final_answer`, `metadata.expected`); empty passes the Trajectory."""
    options: dict[str, Any] = {}
    """Constant keyword arguments passed on every call."""
    isolation: Literal["thread", "process"] = "thread"
    """`process` runs each call in a fresh process that is killed on timeout; `thread` is cheaper but a
    runaway function keeps running in the background after its timeout."""


class CommandEval(_Eval):
    kind: Literal["command"]
    command: str = Field(min_length=1)
    """Shell command run in the trajectory's workspace, inside the sandbox the episode ran in (or, for a trajectory
    without a workspace, on this machine in a scratch folder)."""
    reward_from: Literal["exit_code", "junit", "pytest"] = "exit_code"
    """exit_code: 1 if it exits 0; junit: pass fraction from `junit_xml`; pytest: pass fraction from its summary."""
    junit_xml: str | None = None
    """JUnit XML report path inside the working folder (needed for reward_from: junit); removed before the command
    runs, so only a report it writes counts."""
    env: dict[str, str] = {}
    """Extra environment variables for the command."""
    files: dict[str, str] = {}
    """Workspace path -> a file or folder (relative to evals.yaml), copied there fresh right before the command runs,
    over whatever the policy left at that path: the tests that define the reward, which the policy cannot edit."""

    @model_validator(mode="after")
    def _paths_stay_inside(self) -> CommandEval:
        if self.reward_from == "junit" and not self.junit_xml:
            raise ValueError("reward_from: junit needs junit_xml: the report path the command writes")
        for path in ([self.junit_xml] if self.junit_xml else []) + list(self.files):
            inside_parts(path)
        return self


class MatchEval(_Eval):
    kind: Literal["match"]
    mode: Literal["exact", "regex", "contains", "json_schema", "numeric"]
    """How the target is compared with what is expected."""
    target: str = "final_answer"
    """Trajectory path of the text to check (`final_answer`, `assistant_text`, ...)."""
    expected: Any = None
    """The expected value (a string, a list of strings, a number or a regex)."""
    expected_from: str | None = None
    """Trajectory path of the expected value, e.g. `metadata.expected_answer`."""
    case_sensitive: bool = False
    """Compare case (exact, contains, regex)."""
    partial_credit: bool = False
    """contains with a list: reward the fraction found instead of all-or-nothing."""
    tolerance: float = Field(0.0, ge=0)
    """numeric: largest absolute difference that still matches."""
    rel_tolerance: float = Field(0.0, ge=0)
    """numeric: largest difference relative to the expected value."""
    json_schema: dict[str, Any] | None = None
    """json_schema: the schema the answer must satisfy."""

    @model_validator(mode="after")
    def _check_expected(self) -> MatchEval:
        if self.mode == "json_schema":
            if self.json_schema is None:
                raise ValueError("mode: json_schema needs json_schema: the schema the answer must satisfy")
            import jsonschema

            try:
                jsonschema.validators.validator_for(self.json_schema).check_schema(self.json_schema)
            except jsonschema.SchemaError as e:
                raise ValueError(f"json_schema is not a valid JSON schema: {e.message}") from None
        elif (self.expected is None) == (self.expected_from is None):
            raise ValueError("give exactly one of expected: (a value) or expected_from: (a trajectory path)")
        if self.mode == "regex" and isinstance(self.expected, str):
            try:
                re.compile(self.expected)
            except re.error as e:
                raise ValueError(f"expected is not a valid regex: {e}") from None
        return self


class ExpectedCall(_Strict):
    name: str
    """Tool name."""
    arguments: dict[str, Any] = {}
    """Expected arguments."""


class ToolCallsEval(_Eval):
    kind: Literal["tool_calls"]
    expected: list[ExpectedCall] | None = None
    """The gold calls, inline."""
    expected_from: str | None = None
    """Trajectory path of the gold calls: a list of {name, arguments} (or τ-bench's {name, kwargs})."""
    order: Literal["any", "strict"] = "any"
    """strict: the gold calls must appear in this order (other calls may come between)."""
    match_arguments: Literal["exact", "subset", "passed", "ignore"] = "exact"
    """exact: equal arguments; subset: the gold arguments appear with equal values; passed: the arguments the call
    passed equal the gold's (gold arguments it left out are not compared: τ²-bench's action check); ignore: names
    only. A gold call that lists `compare_args` (τ²-bench) is compared on those arguments alone, unless ignore."""
    partial_credit: bool = False
    """Reward the fraction (see `credit`), instead of all-or-nothing."""
    credit: Literal["recall", "precision"] = "recall"
    """recall: the share of gold calls made (extra calls count against it with extra_calls: fail);
    precision: the share of the calls this attempt made (not those its prompt shows) that match a gold call (when
    it made none: 1 if none was expected, else 0). Precision suits one-turn episodes, where a reply can make one
    right call but never all of them."""
    only_tools: list[str] | None = None
    """Consider only these tools on both sides (e.g. the ones that change state)."""
    ignore_tools: list[str] = []
    """Never consider these tools."""
    skip_failed_calls: bool = False
    """Leave out calls whose result is an error (it starts with 'Error'): they changed nothing, as when a
    database rejects a write."""
    extra_calls: Literal["ignore", "fail"] = "ignore"
    """fail: a considered call that matches no gold call fails the trajectory (or, with partial credit, counts
    against it)."""
    expected_remaining: bool = False
    """Score a task cut mid-episode on what is left to do there: the gold calls the source trace already made
    before the cut (successfully, matched as `match_arguments` says) leave the expected list, and only the calls of
    this attempt count, not those shown in its prompt. On a recorded trace, where nothing came before, this is the
    plain score."""

    @model_validator(mode="after")
    def _one_source(self) -> ToolCallsEval:
        if (self.expected is None) == (self.expected_from is None):
            raise ValueError("give exactly one of expected: (a list of calls) or expected_from: (a trajectory path)")
        return self


class JudgeEval(_Eval):
    kind: Literal["judge"]
    rubric: str = Field(min_length=1)
    """The rubric, a jinja2 template over conversation, final_answer, metadata and trajectory."""
    backend: Literal["auto", "openai", "local"] = "auto"
    """auto: an OpenAI-compatible endpoint when a base URL is configured, else a local model."""
    base_url: str | None = None
    """OpenAI-compatible endpoint (…/v1); falls back to TRACEGYM_JUDGE_BASE_URL."""
    model: str | None = None
    """Endpoint model name, or a local model folder / Hugging Face id; falls back to TRACEGYM_JUDGE_MODEL."""
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable holding the endpoint's API key (optional for local servers)."""
    scale: tuple[int, int] = (1, 5)
    """The rubric's score range; the reward is (score - low) / (high - low)."""
    max_tokens: int = Field(256, ge=1)
    """Reply length for the endpoint judge."""
    max_transcript_chars: int = Field(6000, ge=200)
    """The conversation given to the rubric keeps its last this-many characters (small local models are slow
    on long prompts)."""

    @field_validator("scale")
    @classmethod
    def _scale_order(cls, v: tuple[int, int]) -> tuple[int, int]:
        if v[0] >= v[1]:
            raise ValueError("scale must be [low, high] with low < high, e.g. [1, 5]")
        return v


class LabelEval(_Eval):
    kind: Literal["label"]
    score: str
    """Name of the recorded score (the store's scores.name), e.g. reward or a human label's name."""
    score_kind: Literal["eval", "human", "environment"] | None = None
    """Only scores of this kind; None takes any."""
    labels: dict[str, float] | None = None
    """Recorded label -> reward, for categorical labels (pass: 1, fail: 0)."""
    value_range: tuple[float, float] = (0.0, 1.0)
    """Range of recorded numeric values, rescaled to [0, 1]."""

    @field_validator("value_range")
    @classmethod
    def _range_order(cls, v: tuple[float, float]) -> tuple[float, float]:
        if v[0] >= v[1]:
            raise ValueError("value_range must be [low, high] with low < high, e.g. [0, 10]")
        return v


class ReferenceEval(_Eval):
    kind: Literal["reference"]
    invented_penalty: float = Field(0.5, ge=0, le=1)
    """Each id, amount or date the reply names that neither the conversation nor any reference holds multiplies
    the reward by (1 - this): a made-up order number or price costs, a value read from the conversation does
    not."""
    turns: Literal["mean", "min", "last"] = "last"
    """On a recorded trace (`evals check`), which of its turns' rewards make its reward, of the turns where another
    successful attempt at the same source task stood at the same point: the last (where the trace parted from the
    successful attempts, if it did), the lowest, or their mean."""


class WeightedEval(_Eval):
    kind: Literal["weighted"]
    parts: dict[str, float] = Field(min_length=1)
    """Other evals by name -> weight; the reward is their weighted mean."""

    @field_validator("parts")
    @classmethod
    def _positive(cls, v: dict[str, float]) -> dict[str, float]:
        bad = [k for k, w in v.items() if w <= 0]
        if bad:
            raise ValueError(f"weights must be > 0 (check {', '.join(bad)})")
        return v


EvalSpec = (PythonEval | CommandEval | MatchEval | ToolCallsEval | JudgeEval | LabelEval | ReferenceEval
            | WeightedEval)
"""One eval definition, of any kind."""
EvalDef = Annotated[EvalSpec, Field(discriminator="kind")]


class EvalsConfig(_Strict):
    version: Literal[1] = 1
    """Format version of this file."""
    evals: list[EvalDef] = Field(min_length=1)
    """The evals, each a scorer."""



@dataclass(frozen=True)
class EvalsFile:
    """A loaded evals.yaml: its evals and where each is defined (for error messages)."""

    path: Path
    config: EvalsConfig
    lines: dict[str, int]

    def get(self, name: str) -> EvalSpec:
        for e in self.config.evals:
            if e.name == name:
                return e
        names = [e.name for e in self.config.evals]
        raise ConfigError(f"{self.path} defines no eval {name!r}.{did_you_mean(name, names)} "
                          f"Defined: {', '.join(names)}.")

    def where(self, name: str) -> str:
        return f"{self.path}:{self.lines.get(name, 1)}"

    @property
    def folder(self) -> Path:
        return self.path.resolve().parent


def load_evals(path: Path | str, text: str | None = None) -> EvalsFile:
    """Load and validate an evals.yaml; errors name the file, the line and the fix."""
    path = Path(path)
    if text is None and not path.is_file():
        raise ConfigError(f"No evals file at {path}. Fix: pass --evals PATH (see examples/evals.yaml).")
    config, text = load_model(path, EvalsConfig, text)
    node = compose(text)
    lines = [node_line(node, ("evals", i)) for i in range(len(config.evals))]
    problem = reference_problem(config)
    if problem:
        index, message = problem
        raise ConfigError(f"{path}:{lines[index]}: {message}", title=f"Invalid {path.name}")
    return EvalsFile(path, config, {e.name: line for e, line in zip(config.evals, lines, strict=True)})


def reference_problem(config: EvalsConfig) -> tuple[int, str] | None:
    """(index, message with the fix) for the first repeated name or bad `weighted` part, else None."""
    seen: dict[str, int] = {}
    for i, e in enumerate(config.evals):
        if e.name in seen:
            return i, f"eval name {e.name!r} is used twice. Fix: rename one of them."
        seen[e.name] = i
    for i, e in enumerate(config.evals):
        if not isinstance(e, WeightedEval):
            continue
        for part in e.parts:
            if part not in seen:
                return i, (f"weighted eval {e.name!r} names {part!r}, which is not defined here."
                           f"{did_you_mean(part, seen)} Fix: define it or remove it from parts.")
            if isinstance(config.evals[seen[part]], WeightedEval):
                return i, (f"weighted eval {e.name!r} contains the weighted eval {part!r}. "
                           "Fix: list that eval's parts directly.")
    return None


def parse_eval_ref(text: str) -> tuple[str, float]:
    """`NAME` or `NAME:WEIGHT` (as --eval takes it) -> (name, weight)."""
    name, _, weight = text.partition(":")
    try:
        value = float(weight) if weight else 1.0
    except ValueError:
        raise ConfigError(f"--eval {text!r}: the weight after ':' must be a number, e.g. {name}:0.5.") from None
    if value <= 0:
        raise ConfigError(f"--eval {text!r}: weights must be > 0.")
    return name, value
