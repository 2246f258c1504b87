"""``python -m econ`` is the ``econ`` command."""

from econ.cli import main

raise SystemExit(main())
