"""The command line's own options."""

from __future__ import annotations

import tracegym


def test_version_prints_the_package_version(cli):
    shown = cli("--version")
    assert shown.exit_code == 0 and shown.stdout == f"tracegym {tracegym.__version__}\n"
