"""Started in every Python subprocess the tests run (``PYTHONPATH`` names this folder): record reads outside the repo.

The repository must pass its tests with nothing beside it, so a test, the build or the report that
opens or lists a path next to the checkout (a sibling ``shared`` folder, say) is a defect. :mod:`tests.guard.outside`
does the check; this file only installs it in a subprocess and appends what it finds to the log file
named by ``ECON_TEST_OUTSIDE_LOG``.
"""

import os
import sys

_log = os.environ.get("ECON_TEST_OUTSIDE_LOG")
_repo = os.environ.get("ECON_TEST_REPO")
if _log and _repo:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from tests.guard.outside import install

    def _record(path: str) -> None:
        with open(_log, "a", encoding="utf-8") as log:  # closed at once: an open handle is a ResourceWarning
            log.write(path + "\n")

    install(_repo, _record)
    sys.path.pop(0)
