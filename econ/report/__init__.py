"""The static HTML report: result tables -> Altair charts -> ``reports/`` (offline, deterministic).

``site.build_site`` (run by ``econ build``) and ``site.write_report`` (``econ report``) write
the site; ``pages/`` holds one module per page and the page registry; ``charts/`` the
chart functions; ``figures`` the chart contract; ``html`` escaping and
templates; ``assets`` the shared Vega bundle and page script; ``browser`` the headless
Chromium check used by the tests and ``bench/report.py``.
"""
