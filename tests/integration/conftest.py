"""Fixtures shared by the integration tests."""

from __future__ import annotations

import pytest

from tests.integration.train_workspace import Workspace, build_workspace


@pytest.fixture(scope="session")
def tau_workspace_template(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The training workspace built once per session from the real τ-bench traces; modules take copies of it
    (`copy_workspace`) rather than using it directly."""
    from tests.conftest import TRACES

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES}")
    return build_workspace(tmp_path_factory.mktemp("tau-workspace"), TRACES)
