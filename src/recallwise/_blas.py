"""One BLAS thread for the small matrix products recallwise makes.

Threaded BLAS makes a 20 x 384 by 384 x 120 product take ~1.3 ms on 2 cores instead of ~0.06 ms
on one (measured here): thread start-up dominates tiny products. recallwise's decisions and
searches are all small, so on first use it limits the process's BLAS pools to one thread (the
ONNX embedder has its own pool and is unaffected). Set RECALLWISE_KEEP_BLAS_THREADS=1 to keep
your process's setting.
"""

from __future__ import annotations

import os
import threading

_done = False
_lock = threading.Lock()


def limit_blas_threads() -> None:
    """Limit BLAS to one thread, once per process (no-op when opted out or unavailable)."""
    global _done
    if _done:
        return
    with _lock:
        if _done:
            return
        _done = True
        if os.environ.get("RECALLWISE_KEEP_BLAS_THREADS"):
            return
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover - a declared dependency
            return
        threadpool_limits(limits=1, user_api="blas")
