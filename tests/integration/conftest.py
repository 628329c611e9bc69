"""Fixtures shared by the integration tests."""

from __future__ import annotations

import fcntl
import os
import shutil

import pytest

from tests.integration.train_workspace import Workspace, build_workspace, workspace_at


@pytest.fixture(scope="session")
def tau_workspace_template(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The training workspace built once per test run from the real τ-bench traces; modules take copies of it
    (`copy_workspace`) rather than using it directly. Under pytest-xdist the workers share one build (~30 s of CPU
    each otherwise): the first to need it builds it in the run's common temporary folder under a file lock, the
    others wait on that lock and find it built (a marker written last; a build that failed leaves none)."""
    from tests.conftest import TRACES

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES}")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root, built = shared / "tau-workspace", shared / "tau-workspace.built"
    with open(shared / "tau-workspace.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.exists():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            build_workspace(root, TRACES)
            built.touch()
    return workspace_at(root)
