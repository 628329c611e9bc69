"""Training: the GRPO loss with its corrections, advantages, the trainer and the loop (samplers: `tracegym.samplers`).

Kept import-light on purpose: `tracegym --help` imports the CLI, which must not pull in
torch. Import what you need from the submodules, e.g.
`from tracegym.training.grpo.loss import token_loss`.
"""
