"""Keep freed memory in the process, so a training step reuses the last step's buffers.

glibc's malloc serves blocks over its mmap threshold (128 KB, rising to at most 32 MB) with fresh `mmap`
pages and returns them on `free`, and trims the heap top it no longer uses. A trainer step allocates the
same large buffers every time (the completion logits [T, V], the gradients of the embedding matrix, activations for the
backward pass), so each step would page-fault them all back in, zero-filled by the kernel. `mallopt` with
M_MMAP_MAX=0 sends every allocation through the heap and a high M_TRIM_THRESHOLD keeps what is freed there,
which is what the jemalloc or tcmalloc that PyTorch's CPU performance guide preloads achieve, at the price of a
few percent more peak memory (figures: benchmarks/RESULTS.md).
The setting is process-wide and lasts as long as the process; elsewhere than Linux with glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import sys

M_TRIM_THRESHOLD = -1  # glibc's <malloc.h> parameter numbers
M_MMAP_MAX = -4
_INT_MAX = 2**31 - 1  # mallopt takes an int


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep freed blocks for reuse; True when it accepted both settings."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the interpreter is linked against
    except AttributeError:  # a C library without mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, _INT_MAX))
