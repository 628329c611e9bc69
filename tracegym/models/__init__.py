"""The model layer shared by the harnesses and the trainer.

- `load`: resolve a model reference ('smollm2-135m', a model folder, or what a registered resolver
  understands) to a local folder, converting the shipped SmolLM2 GGUF once; load model and tokenizer
  offline in fp32, bf16 or fp16.
- `sampling`: `SamplingEngine`, batched KV-cached generation that records, per token, the sampler
  log-prob under the truncated distribution it drew from and the kept support; `SamplingParams`.
- `shared_prefix`: decode steps where the rows of a GRPO group attend to one copy of their prompt's cache.
- `support`: `Support`, per-token candidate sets in CSR form (`padded()` gives dense views for gathers).
- `scoring`: re-score given completion ids (full vocabulary or renormalised over a support).
- `tiny`: a tiny random Llama with the real SmolLM2 tokenizer, for fast tests.

Typical use (sampler side, then trainer side)::

    engine = SamplingEngine.from_ref("smollm2-135m", "bf16", sampler_id="cpu-bf16/0")
    params = SamplingParams(temperature=1.0, top_p=0.97, max_support=64, max_new_tokens=256)
    [seq] = engine.generate([prompt_ids], params, seeds=[0])
    # seq.logprobs (n,): log mu(token); seq.support: S per token; seq.policy_version, seq.sampler_id

    logits = completion_logits(trainer_model, [seq.prompt_ids], [seq.completion_ids])[0]  # (n, V), with grad
    log_pi_s = token_logprobs(logits, torch.tensor(seq.completion_ids), params.temperature, seq.support)
    log_pi_support = support_logprobs(logits, seq.support, params.temperature)  # (n, K) for score centering
"""
