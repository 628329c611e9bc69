"""Chat templates, tool schemas, and the token-exact multi-turn record.

Conversations are rendered with the model's own chat template. Templates that take tools (they mention
``tools``) get the schemas through ``apply_chat_template(tools=...)``; the others (SmolLM2's among them)
get them in the system prompt in the Hermes style, with tool results sent back as user turns wrapped in
``<tool_response>`` and earlier tool calls written as ``<tool_call>`` text, as Qwen2.5 and Hermes do.

The token record is built without ever re-tokenising what the model produced: the next prompt is the
previous prompt's ids + the model's completion ids + the ids the template adds for the environment's new
messages. Those last ids are the difference between renderings of the conversation with and without the
new messages (plus the template's end-of-turn tokens the model did not write itself, e.g. the newline
after ``<|im_end|>``). When a template renders earlier turns differently once later turns exist, the
difference is taken against a neutral stand-in history instead, and `ChatStats.template_fallbacks` counts it.
Model tokens are trainable; prompt and environment tokens are masked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from tracegym.errors import ModelError

if TYPE_CHECKING:
    from collections.abc import Callable

    from transformers import PreTrainedTokenizerBase

Message = dict[str, Any]
Source = Literal["prompt", "model", "environment"]

HERMES_TOOLS_PROMPT = (
    "You are a function calling AI model. You are provided with function signatures within <tools></tools> "
    "XML tags. You may call one or more functions to assist with the user query. Don't make assumptions about "
    "what values to plug into functions. Here are the available tools:\n<tools>\n{tools}\n</tools>\n"
    "For each function call, return a JSON object with the function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{{"name": <function-name>, "arguments": <args-dict>}}\n</tool_call>'
)
# Stand-in history for the fallback difference: plain turns every template accepts.
_NEUTRAL_HISTORY: list[Message] = [{"role": "user", "content": "Hello."}, {"role": "assistant", "content": "Hi."}]


def has_native_tools(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether the tokenizer's chat template renders a `tools` argument itself."""
    template = tokenizer.chat_template
    if isinstance(template, dict):
        template = template.get("tool_use") or template.get("default") or ""
    return "tools" in (template or "")


def hermes_tools_prompt(tools: Sequence[dict[str, Any]]) -> str:
    """The Hermes-style system prompt text that lists tool schemas, one JSON object per line."""
    return HERMES_TOOLS_PROMPT.format(tools="\n".join(json.dumps(t, ensure_ascii=False) for t in tools))


def template_messages(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, native: bool
) -> list[Message]:
    """Messages as the template should see them: text content; for non-native templates, tools in Hermes style."""
    out = [_plain(m) for m in messages]
    if native:
        return out
    out = [_hermes_message(m) for m in out]
    if tools:
        prompt = hermes_tools_prompt(tools)
        if out and out[0]["role"] == "system":
            out[0] = {**out[0], "content": f"{out[0]['content']}\n\n{prompt}" if out[0]["content"] else prompt}
        else:
            out.insert(0, {"role": "system", "content": prompt})
    return out


def _plain(message: Message) -> Message:
    content = message.get("content")
    if isinstance(content, list):  # OpenAI content parts: keep the text ones
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return {**message, "content": content or ""}


def _hermes_message(message: Message) -> Message:
    if message["role"] == "tool":
        return {"role": "user", "content": f"<tool_response>\n{message['content']}\n</tool_response>"}
    calls = message.get("tool_calls")
    if message["role"] == "assistant" and calls:
        text = [message["content"]] if message["content"] else []
        for call in calls:
            fn = call.get("function", call)
            arguments = fn.get("arguments", {})
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    pass  # keep the raw string: the model wrote it that way
            payload = json.dumps({"name": fn.get("name"), "arguments": arguments}, ensure_ascii=False)
            text.append(f"<tool_call>\n{payload}\n</tool_call>")
        return {"role": "assistant", "content": "\n".join(text)}
    return {"role": message["role"], "content": message["content"]}


class ChatRenderer:
    """Renders conversations with one tokenizer's chat template, for one tool list."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, tools: Sequence[dict[str, Any]] | None = None) -> None:
        if not tokenizer.chat_template:
            raise ModelError("the tokenizer has no chat template; pass a chat model or a tokenizer with a template")
        self.tokenizer = tokenizer
        self.tools = list(tools) if tools else None
        self.native_tools = has_native_tools(tokenizer)
        # The `tools` argument of templates that render tools themselves, in the type transformers declares.
        self._template_tools: list[dict[Any, Any] | Callable[..., Any]] | None = (
            list(self.tools) if self.tools and self.native_tools else None)

    # transformers declares one return type for every `tokenize`/`return_dict` choice, hence the casts below.
    def text(self, messages: Sequence[Message], add_generation_prompt: bool = True) -> str:
        """The rendered conversation as text (for display and API logs; never for training inputs)."""
        return cast(str, self.tokenizer.apply_chat_template(
            template_messages(messages, self.tools, self.native_tools),
            tools=self._template_tools,
            add_generation_prompt=add_generation_prompt,
            tokenize=False,
        ))

    def ids(self, messages: Sequence[Message], add_generation_prompt: bool = True) -> list[int]:
        """The rendered conversation as token ids; control tokens inside message text are encoded as text."""
        ids = cast(list[int], self.tokenizer.apply_chat_template(
            template_messages(messages, self.tools, self.native_tools),
            tools=self._template_tools,
            add_generation_prompt=add_generation_prompt,
            tokenize=True,
            return_dict=False,
            sanitize_control_tokens=True,
        ))
        return [int(i) for i in ids]


@dataclass
class Segment:
    """A span [start, end) of a conversation's ids and who wrote it."""

    start: int
    end: int
    source: Source


@dataclass
class ChatStats:
    """Counters a harness reports with its episodes."""

    template_fallbacks: int = 0
    """Environment turns whose ids came from the neutral-history difference (the template re-rendered history)."""


@dataclass
class TokenConversation:
    """The token-exact record of one multi-turn episode.

    `ids` is always the next prompt; `trainable[i]` is True exactly for tokens the model sampled.
    `messages` is the text view of the same conversation (for API clients, tool parsing and scorers).
    """

    renderer: ChatRenderer
    stop_token_ids: tuple[int, ...]
    messages: list[Message]
    ids: list[int] = field(default_factory=list)
    trainable: list[bool] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    stats: ChatStats = field(default_factory=ChatStats)
    _turn_closed: bool = True

    @classmethod
    def start(
        cls, renderer: ChatRenderer, messages: Sequence[Message], stop_token_ids: Sequence[int]
    ) -> TokenConversation:
        """A conversation whose first prompt is `messages` rendered with the generation prompt."""
        if not stop_token_ids:
            raise ModelError("a token conversation needs the model's end-of-turn ids (stop_token_ids)")
        conv = cls(renderer, tuple(int(i) for i in stop_token_ids), [dict(m) for m in messages])
        conv._append(renderer.ids(conv.messages, add_generation_prompt=True), "prompt")
        return conv

    @property
    def prompt_ids(self) -> list[int]:
        return list(self.ids)

    def add_completion(self, completion_ids: Sequence[int], text: str | None = None) -> str:
        """Append the model's completion ids verbatim (trainable); returns its text, also added to `messages`.

        `text` is the reply's text where it is not the ids' (cut before a stop string); the turn is then left
        open, as one cut at its length limit: the template's end-of-turn tokens come with the environment's."""
        ids = [int(i) for i in completion_ids]
        self._turn_closed = text is None and bool(ids) and ids[-1] in self.stop_token_ids
        content_ids = ids[:-1] if self._turn_closed else ids
        if text is None:
            text = cast(str, self.renderer.tokenizer.decode(content_ids, skip_special_tokens=False))  # one list: a str
        self.messages.append({"role": "assistant", "content": text})
        self._append(ids, "model")
        return text

    def add_environment(self, new_messages: Sequence[Message]) -> list[int]:
        """Append the environment's messages (tool results, user turns) as template ids (masked); returns them."""
        if not self.messages or self.messages[-1]["role"] != "assistant":
            raise ModelError("environment messages follow a model completion; call add_completion first")
        new = [dict(m) for m in new_messages]
        ids = self._environment_ids(self.messages, new)
        if ids is None:
            self.stats.template_fallbacks += 1
            ids = self._environment_ids(_NEUTRAL_HISTORY, new)
        if ids is None:
            raise ModelError(
                "the chat template renders a conversation differently once more messages follow, even for a "
                "plain user/assistant history, so environment turns cannot be appended token-exactly"
            )
        self.messages.extend(new)
        self._append(ids, "environment")
        return ids

    def _environment_ids(self, history: Sequence[Message], new: Sequence[Message]) -> list[int] | None:
        """Template end-of-turn ids the model did not write + the rendering difference of `new`; None if ill-posed."""
        before = self.renderer.ids(history, add_generation_prompt=False)
        after = self.renderer.ids([*history, *new], add_generation_prompt=True)
        if after[: len(before)] != before:
            return None
        ends = [i for i, t in enumerate(before) if t in self.stop_token_ids]
        if not ends:
            return None
        # The assistant turn is closed by the template's last end-of-turn token; whatever follows it (a
        # newline) is template text. A model cut off by length did not write the end-of-turn token either.
        closing = before[ends[-1] + 1 :] if self._turn_closed else before[ends[-1] :]
        return closing + after[len(before) :]

    def _append(self, ids: list[int], source: Source) -> None:
        start = len(self.ids)
        self.ids.extend(ids)
        self.trainable.extend([source == "model"] * len(ids))
        self.segments.append(Segment(start, len(self.ids), source))
