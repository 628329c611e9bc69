"""Weight versions from the trainer to the samplers: folder, HTTP, Ray's object store, deltas, LoRA adapters."""
