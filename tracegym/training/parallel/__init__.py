"""The trainer as FSDP2 ranks: spawned processes or Ray actors, and their rendezvous."""
