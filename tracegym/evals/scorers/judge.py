"""`kind: judge`: an LLM grades the trajectory against a rubric.

Two backends. `openai`: any OpenAI-compatible `/chat/completions` endpoint;
the reply must contain `Score: N`. `local`: a Hugging Face causal LM on this
machine (SmolLM2-135M-Instruct by default), read without sampling: the reward is
the expected score under the model's next-token distribution over the digits
of the scale after "Score: ", so a small model never "replies garbage".
"""

from __future__ import annotations

import json
import os
import re

from tracegym.errors import ConfigError
from tracegym.evals.scorers.base import Scorer, ScorerContext, call_with_timeout
from tracegym.evals.scorers.config import EvalsFile, JudgeEval
from tracegym.evals.scorers.trajectory import ScoreResult, Trajectory

SYSTEM = "You are a strict evaluator of an AI agent's work. Follow the rubric exactly."
_SCORE = re.compile(r"score\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)


class JudgeScorer(Scorer):
    def __init__(self, spec: JudgeEval, where: str) -> None:
        super().__init__(spec.name, spec.timeout_s)
        import jinja2

        self.spec = spec
        self.low, self.high = spec.scale
        try:
            self.template = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(spec.rubric)
        except jinja2.TemplateSyntaxError as e:
            raise ConfigError(f"{where}: the rubric is not a valid jinja2 template: {e.message} "
                              f"(rubric line {e.lineno}). Fix: balance its {{{{ }}}} and {{% %}}.") from None
        self.base_url = spec.base_url or os.environ.get("TRACEGYM_JUDGE_BASE_URL")
        self.model_ref = spec.model or os.environ.get("TRACEGYM_JUDGE_MODEL")
        self.backend = spec.backend if spec.backend != "auto" else ("openai" if self.base_url else "local")
        if self.backend == "openai" and not (self.base_url and self.model_ref):
            raise ConfigError(f"{where}: the openai judge needs a base URL and a model name. Fix: set base_url: and "
                              "model: in the eval, or TRACEGYM_JUDGE_BASE_URL and TRACEGYM_JUDGE_MODEL.")
        if self.backend == "local" and (self.low < 0 or self.high > 9):
            raise ConfigError(f"{where}: the local judge reads one digit, so its scale must lie within 0-9 "
                              f"(got {list(spec.scale)}). Fix: use scale: [1, 5] or an openai backend.")
        self._local: _LocalJudge | None = None

    def prompt(self, traj: Trajectory) -> str:
        rubric = self.template.render(conversation=transcript(traj, self.spec.max_transcript_chars),
                                      final_answer=traj.final_answer or "",
                                      metadata=traj.metadata, trajectory=traj)
        return (f"{rubric.strip()}\n\nGive your verdict as `Score: N`, where N is an integer from "
                f"{self.low} (worst) to {self.high} (best).")

    def _score(self, traj: Trajectory) -> ScoreResult:
        prompt = self.prompt(traj)
        if self.backend == "openai":
            return self._from_reply(self._ask_endpoint(prompt))
        if self._local is None:
            self._local = _LocalJudge(self.model_ref, self.low, self.high)  # loaded on first use, not timed
        local = self._local
        expected, probs, mass = call_with_timeout(lambda: local.expected_score(prompt), self.timeout_s)
        details = {"expected_score": expected, "probabilities": probs, "digit_mass": mass}
        return ScoreResult(self._normalise(expected), details)

    def _ask_endpoint(self, prompt: str) -> str:
        import httpx

        key = os.environ.get(self.spec.api_key_env)
        payload = {"model": self.model_ref, "temperature": 0, "max_tokens": self.spec.max_tokens,
                   "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]}
        response = httpx.post(f"{str(self.base_url).rstrip('/')}/chat/completions", json=payload,
                              headers={"Authorization": f"Bearer {key}"} if key else {}, timeout=self.timeout_s)
        response.raise_for_status()
        try:
            return str(response.json()["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError, ValueError):
            raise ValueError(f"the endpoint's reply is not a chat completion: {response.text[:200]}") from None

    def _from_reply(self, reply: str) -> ScoreResult:
        found = _SCORE.findall(reply) or ([reply.strip()] if re.fullmatch(r"-?\d+(\.\d+)?", reply.strip()) else [])
        if not found:
            raise ValueError(f"the judge's reply has no 'Score: N': {reply[:200]!r}")
        value = float(found[-1])
        if not self.low <= value <= self.high:
            raise ValueError(f"the judge scored {value:g}, outside its scale {self.low}-{self.high}")
        return ScoreResult(self._normalise(value), {"score": value, "reply": reply[-1000:]})

    def _normalise(self, value: float) -> float:
        return (value - self.low) / (self.high - self.low)


class _LocalJudge:
    """A causal LM read at the token after "Score: "."""

    def __init__(self, ref: str | None, low: int, high: int) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from tracegym.models.load import resolve_model_ref

        folder = resolve_model_ref(ref)
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
        self.scores = list(range(low, high + 1))

    def expected_score(self, prompt: str) -> tuple[float, dict[str, float], float]:
        """(expected score, probability of each score given a score is said, mass on score tokens)."""
        import torch

        context, score_ids = self._encode(prompt)
        limit = int(getattr(self.model.config, "max_position_embeddings", 2048))
        context = context[-(limit - 1):]  # the end holds the rubric's verdict instruction
        with torch.no_grad():
            logits = self.model(torch.tensor([context])).logits[0, -1].float()  # (vocab,)
        all_probs = torch.softmax(logits, dim=-1)
        picked = all_probs[score_ids]  # (n_scores,)
        mass = float(picked.sum())
        probs = (picked / picked.sum()).tolist()
        expected = sum(p * s for p, s in zip(probs, self.scores, strict=True))
        return expected, {str(s): round(p, 6) for s, p in zip(self.scores, probs, strict=True)}, mass

    def _encode(self, prompt: str) -> tuple[list[int], list[int]]:
        """The context ids and, for each score, the one token that says it right after "Score: "."""
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        if self.tokenizer.chat_template:
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        else:
            text = f"{SYSTEM}\n\n{prompt}\n\n"
        encoded = [self.tokenizer.encode(f"{text}Score: {s}", add_special_tokens=False) for s in self.scores]
        context = encoded[0][:-1]
        if any(len(ids) != len(encoded[0]) or ids[:-1] != context for ids in encoded):
            raise ValueError("the judge model's tokenizer does not say each score as one token after 'Score: '")
        return context, [ids[-1] for ids in encoded]


def transcript(traj: Trajectory, limit: int) -> str:
    """The conversation as readable text (the system prompt left out), its end kept when too long."""
    lines = []
    for msg in traj.messages:
        role = msg.get("role")
        if role == "system":
            continue
        if msg.get("content"):
            lines.append(f"{role}: {msg['content']}")
        for call in msg.get("tool_calls") or []:
            fn = call.get("function") or {}
            args = fn.get("arguments")
            lines.append(f"{role} calls {fn.get('name')}({args if isinstance(args, str) else json.dumps(args)})")
    text = "\n".join(lines)
    return text if len(text) <= limit else "[…earlier turns cut…]\n" + text[-limit:]


def build(spec: JudgeEval, ctx: ScorerContext, evals: EvalsFile | None) -> JudgeScorer:
    return JudgeScorer(spec, evals.where(spec.name) if evals else spec.name)
