"""Pick a sandbox: bubblewrap, docker on request, or the unisolated subprocess only where the config accepts it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, model_validator

from tracegym.errors import ConfigError, SandboxError, did_you_mean
from tracegym.harnesses.sandbox.base import Sandbox
from tracegym.harnesses.sandbox.bwrap import BwrapSandbox, bwrap_problem
from tracegym.harnesses.sandbox.subprocess_rlimit import SubprocessSandbox

SandboxKind = Literal["auto", "bwrap", "subprocess", "docker"]

_ACCEPT = "set allow_unisolated: true in the harness config"


class SandboxChoice(BaseModel):
    """Which sandbox a harness runs model-written commands in, and whether running them unisolated is accepted."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    sandbox: SandboxKind = "auto"
    """auto (bubblewrap; where it cannot run, subprocess if allow_unisolated, else an error), bwrap, docker, or
    subprocess (needs allow_unisolated)."""
    docker_image: str = "python:3.11-slim"
    """The image for the docker sandbox."""
    allow_unisolated: bool = False
    """Accept running the model's commands (for the proxy harness: the agent program), and command evals over its
    workspace, in the subprocess sandbox, which does not isolate them: they can read and write what your user can
    and reach the network."""

    @model_validator(mode="after")
    def _subprocess_is_accepted(self) -> SandboxChoice:
        if self.sandbox == "subprocess" and not self.allow_unisolated:
            raise ValueError("sandbox: subprocess does not isolate the model's commands from this machine. Fix: "
                             "choose auto, bwrap or docker, or also set allow_unisolated: true to accept that")
        return self

    def make(self) -> Sandbox:
        return make_sandbox(self.sandbox, docker_image=self.docker_image, allow_unisolated=self.allow_unisolated)


def make_sandbox(
    kind: SandboxKind = "auto",
    *,
    env: Mapping[str, str] | None = None,
    docker_image: str = "python:3.11-slim",
    allow_unisolated: bool = False,
) -> Sandbox:
    """A sandbox of `kind`; 'auto' means bubblewrap, falling back to subprocess only when `allow_unisolated`.

    `env` adds variables to the commands' (otherwise minimal) environment; docker
    takes its environment from the image. Raises SandboxError when the asked-for
    kind cannot run here, saying why and what to do, and ConfigError for the
    subprocess kind unless `allow_unisolated`.
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
        if not allow_unisolated:
            raise ConfigError(f"the subprocess sandbox does not isolate commands. Fix: {_ACCEPT} to accept that, "
                              "or choose the bwrap or docker sandbox.")
        return SubprocessSandbox(env=dict(env or {}), reason="chosen with sandbox: subprocess")
    problem = bwrap_problem()
    if problem is None:
        return BwrapSandbox(env=env)
    if kind == "auto" and allow_unisolated:
        return SubprocessSandbox(env=dict(env or {}), reason=f"sandbox: auto fell back to it because bubblewrap "
                                                             f"cannot sandbox commands here: {problem}")
    fix = "" if kind == "bwrap" else f"; or, to run them without isolation, {_ACCEPT}"
    raise SandboxError(f"bubblewrap cannot sandbox commands here: {problem.rstrip('.')}. "
                       f"Fix that, or choose sandbox: docker{fix}.")


class SandboxProvider:
    """One sandbox per run, made on first use; a failure to make it is raised to each episode that asks."""

    def __init__(self, choice: SandboxChoice, make: Callable[[], Sandbox] | None = None) -> None:
        self._make = make or choice.make
        self._sandbox: Sandbox | None = None
        self._lock = threading.Lock()

    def get(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                self._sandbox = self._make()
            return self._sandbox

    def close(self) -> None:
        with self._lock:
            if self._sandbox is not None:
                self._sandbox.close()
                self._sandbox = None
