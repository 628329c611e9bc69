"""What the loop does about sampler pools after each step: their cost, health and quarantine."""
