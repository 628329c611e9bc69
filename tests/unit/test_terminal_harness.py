"""The terminal harness of tests/conftest.py starts its child as a shell would, whatever this worker's state."""

from __future__ import annotations

import signal
import subprocess
import sys

from tests.conftest import _as_a_shell_starts_it

SHOW = ("import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "
        "signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))")


def test_a_child_gets_ctrl_c_though_this_process_ignores_and_blocks_it():
    """An ignored signal survives exec and a blocked one stays blocked: without the harness the child would never
    see the Ctrl-C a test sends it (a run on a loaded machine finished all its episodes, exit 0, not 130)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        plain = subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True, check=True).stdout
        with _as_a_shell_starts_it():
            started = subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True, check=True).stdout
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        assert signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, previous)
    assert plain.split() == ["False", "True"]
    assert started.split() == ["True", "False"]
