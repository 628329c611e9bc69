"""Pick a sandbox: bubblewrap where it works, else the plain subprocess (with a warning), or docker on request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from tracegym.errors import ConfigError, SandboxError, did_you_mean
from tracegym.harnesses.sandbox.base import Sandbox
from tracegym.harnesses.sandbox.bwrap import BwrapSandbox, bwrap_problem
from tracegym.harnesses.sandbox.subprocess_rlimit import SubprocessSandbox

SandboxKind = Literal["auto", "bwrap", "subprocess", "docker"]


def make_sandbox(
    kind: SandboxKind = "auto",
    *,
    env: Mapping[str, str] | None = None,
    docker_image: str = "python:3.11-slim",
) -> Sandbox:
    """A sandbox of `kind`; 'auto' means bubblewrap when a probe command runs in it, else subprocess.

    `env` adds variables to the commands' (otherwise minimal) environment; docker
    takes its environment from the image. Raises SandboxError when the asked-for
    kind cannot run here, saying what to install or start.
    """
    kinds = get_args(SandboxKind)
    if kind not in kinds:
        raise ConfigError(
            f"unknown sandbox kind {kind!r}; choose one of {', '.join(kinds)}.{did_you_mean(kind, kinds)}"
        )
    if kind == "docker":
        from tracegym.harnesses.sandbox.docker import DockerSandbox

        return DockerSandbox(image=docker_image)
    if kind == "subprocess":
        return SubprocessSandbox(env=dict(env or {}))
    problem = bwrap_problem()
    if problem is None:
        return BwrapSandbox(env=env)
    if kind == "bwrap":
        raise SandboxError(f"bubblewrap cannot sandbox commands here: {problem}")
    return SubprocessSandbox(env=dict(env or {}))
