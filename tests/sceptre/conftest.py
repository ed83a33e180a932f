"""sceptre itself, for the proof tests: installed once per machine in its own venv
(tests/sceptre/install.py)."""

from __future__ import annotations

import pytest

from .install import Sceptre, find_or_install


@pytest.fixture(scope="session")
def sceptre() -> Sceptre:
    """How to run sceptre 4; the test is skipped, saying why, only where it cannot be installed."""
    found = find_or_install()
    if isinstance(found, str):
        pytest.skip(found)
    return found
