"""Hypothesis profiles of the fuzz suite (issue 15).

``ci`` (default) runs a few dozen examples per property, a few seconds in all; ``long`` is the
campaign on demand::

    HYPOTHESIS_PROFILE=long python3 -m pytest tests/fuzz -q
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_common = dict(deadline=None, derandomize=False, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much])
settings.register_profile("ci", max_examples=25, derandomize=True, **{
    k: v for k, v in _common.items() if k != "derandomize"})
settings.register_profile("long", max_examples=3000, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
