"""The model layer shared by the harnesses and the trainer.

- `load`: resolve a model reference ('smollm2-135m', a model folder, or what a registered resolver
  understands) to a local folder, converting the shipped SmolLM2 GGUF once; load model and tokenizer
  offline in fp32, bf16 or fp16.
- `sampling`: `SamplingEngine`, batched KV-cached generation that records, per token, the sampler
  log-prob under the truncated distribution it drew from and the kept support; `SamplingParams`.
- `support`: `Support`, per-token candidate sets in CSR form.
- `scoring`: re-score given completion ids (full vocabulary or renormalised over a support).
- `tiny`: a tiny random Llama with the real SmolLM2 tokenizer, for fast tests.
"""
