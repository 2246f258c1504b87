"""Named step boundaries where the fault-injection tests kill a run (tests/faults/).

``ECON_FAULT_AT=<boundary>`` makes the process kill itself with SIGKILL when it reaches that
boundary (no cleanup code runs, as after ``kill -9`` or a power cut of the process);
``ECON_FAULT_TRACE=<file>`` appends the name of every boundary passed to the file, so the tests
can list a run's boundaries instead of keeping a copy of them. Both are read at each boundary and
nowhere else; unset, a boundary costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

AT = "ECON_FAULT_AT"
TRACE = "ECON_FAULT_TRACE"


def boundary(name: str) -> None:
    """Mark the step boundary ``name`` (see the module docstring)."""
    trace = os.environ.get(TRACE)
    if trace:
        with open(trace, "a", encoding="utf-8") as f:
            f.write(name + "\n")
    if os.environ.get(AT) == name:
        os.kill(os.getpid(), signal.SIGKILL)
