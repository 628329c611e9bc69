"""The sampler side: where rollouts come from and how weights reach them.

Rollout sources (in-process `inprocess.SyncRollouts`, asynchronous `orchestrator.AsyncRollouts`), their backends
(local processes, Ray actors), the sampler worker, and weight transport with sparse deltas. The trainer
(`tracegym.training`) imports this package; nothing here imports `tracegym.training`.

Kept import-light: import what you need from the submodules.
"""
