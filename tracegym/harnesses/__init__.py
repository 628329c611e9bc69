"""Harnesses: the environments episodes run in (chat, tools, trace replay, sandboxed shell)."""
