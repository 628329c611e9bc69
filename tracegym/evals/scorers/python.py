"""`kind: python`: an eval function the team already has, called as `module:function`."""

from __future__ import annotations

import importlib
import multiprocessing
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tracegym.errors import ConfigError, did_you_mean
from tracegym.evals.scorers.base import Scorer, ScorerContext, ScorerTimeout, call_with_timeout
from tracegym.evals.scorers.config import EvalsFile, PythonEval
from tracegym.evals.scorers.trajectory import Trajectory, resolve_path

if TYPE_CHECKING:
    from multiprocessing.connection import Connection


class PythonScorer(Scorer):
    def __init__(self, spec: PythonEval, fn: Callable[..., Any]) -> None:
        super().__init__(spec.name, spec.timeout_s)
        self.spec = spec
        self.fn = fn

    def _score(self, traj: Trajectory) -> Any:
        args, kwargs = self._call_args(traj)
        if self.spec.isolation == "process":
            return _call_in_process(self.spec.function, args, kwargs, self.timeout_s)
        return call_with_timeout(lambda: self.fn(*args, **kwargs), self.timeout_s)

    def _call_args(self, traj: Trajectory) -> tuple[tuple[Any, ...], dict[str, Any]]:
        kwargs = dict(self.spec.options)
        if not self.spec.arguments:
            return (traj,), kwargs
        kwargs.update({kw: resolve_path(traj, path) for kw, path in self.spec.arguments.items()})
        return (), kwargs


def build(spec: PythonEval, ctx: ScorerContext, evals: EvalsFile | None) -> PythonScorer:
    where = evals.where(spec.name) if evals else spec.name
    for folder in spec.python_path:
        resolved = str((ctx.evals_dir / folder).resolve())
        if resolved not in sys.path:
            sys.path.insert(0, resolved)
    return PythonScorer(spec, import_function(spec.function, where))


def import_function(ref: str, where: str) -> Callable[..., Any]:
    """`pkg.mod:fn` imported, or a `ConfigError` naming the module or function that is missing."""
    module_name, _, fn_name = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigError(
            f"{where}: cannot import module {module_name!r} for eval function {ref!r}: {e}. "
            "Fix: install the package that provides it, or add its folder to python_path: in the eval."
        ) from None
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        names = [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))]
        raise ConfigError(
            f"{where}: module {module_name!r} ({getattr(module, '__file__', '?')}) has no function {fn_name!r}."
            f"{did_you_mean(fn_name, names)} Fix: point function: at module:function."
        )
    return fn


def _call_in_process(ref: str, args: tuple[Any, ...], kwargs: dict[str, Any], timeout_s: float) -> Any:
    """Call `ref` in a fresh spawned process, killed if it outlives `timeout_s`."""
    ctx = multiprocessing.get_context("spawn")  # fork would copy DuckDB/torch state into the child
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(ref, list(sys.path), args, kwargs, child), daemon=True)
    proc.start()
    child.close()
    try:
        if not parent.poll(timeout_s):
            raise ScorerTimeout(" (its process was killed)")
        status, payload = parent.recv()
    except EOFError:
        proc.join(1)
        raise RuntimeError(f"the eval process died (exit code {proc.exitcode}) without a result") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        parent.close()
    if status == "error":
        raise RuntimeError(payload)
    return payload


def _child_main(ref: str, path: list[str], args: tuple[Any, ...], kwargs: dict[str, Any], conn: Connection) -> None:
    sys.path[:] = path
    try:
        module_name, _, fn_name = ref.partition(":")
        fn = getattr(importlib.import_module(module_name), fn_name)
        conn.send(("ok", fn(*args, **kwargs)))
    except BaseException:  # noqa: BLE001 - sent back to the parent, which records it as a scorer error
        conn.send(("error", traceback.format_exc(limit=5).strip().splitlines()[-1]))
    finally:
        conn.close()
