"""The proxy harness: a team's agent program, unchanged, with the policy behind an OpenAI endpoint."""
