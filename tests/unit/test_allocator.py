"""keep_freed_memory: a step's large buffers are reused instead of page-faulted back in."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # two subprocesses that fault in 64 MB buffers twelve times

BIG = 16 * 2**20  # floats: 64 MB, over glibc's largest mmap threshold (32 MB)
PAGES = BIG * 4 // 4096

# Twelve "steps", each allocating and freeing the same two buffers, as a trainer step does; prints the
# minor page faults of each step.
PROBE = f"""
import resource, sys
import torch
from tracegym.models.allocator import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
faults = []
for _ in range(12):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    a, b = torch.ones({BIG}), torch.ones({BIG} // 3)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    del a, b
print(faults)
"""


def _faults(mode: str) -> list[int]:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
    return [int(v) for v in done.stdout.strip().splitlines()[-1].strip("[]").split(",")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc settings are Linux-only")
def test_a_steps_buffers_are_reused_instead_of_faulted_back_in() -> None:
    default, kept = _faults("default"), _faults("keep")
    # By default every step maps the 64 MB buffer afresh and faults each of its pages in.
    assert all(f >= PAGES for f in default[-4:]), default
    # Kept: after a few steps the freed blocks fit the next step's, and nothing faults.
    assert sum(kept[-4:]) < PAGES // 10, kept
