"""mustard-sidecar for Python: run untrusted JavaScript and TypeScript in a
mustard-sidecar process, answer its tool calls, and resume it from snapshot
bytes in any process. Standard library only; Python 3.9 or later."""

from .client import (Call, GuestError, MustardError, ProcessError, Program, Result, Sidecar, Step,
                     find_sidecar, snapshot_auth)
from .durable import DirStore, Durable, ExecutionBusy, MemoryStore, StoreError
from .pool import SidecarPool
from .values import HOLE, MAX_DEPTH, UNDEFINED, from_structured, to_structured

__version__ = "0.3.0"

__all__ = [
    "Sidecar", "SidecarPool", "Program", "Step", "Call", "Result", "MustardError", "GuestError", "ProcessError",
    "Durable", "MemoryStore", "DirStore", "StoreError", "ExecutionBusy", "find_sidecar", "snapshot_auth",
    "UNDEFINED", "HOLE", "MAX_DEPTH", "to_structured", "from_structured",
]
