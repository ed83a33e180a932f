"""tests/sceptre/install.py where sceptre cannot be had: the reason pip gave, nothing half-installed left.
(Where it can, the proof tests in test_sceptre_deployed.py use it.) The registry is made unreachable with
pip's own PIP_NO_INDEX, so this needs no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import install


def test_an_install_that_cannot_reach_the_registry_says_why_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("FORMWRIGHT_TEST_SCEPTRE", raising=False)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))
    folder = install.cache_folder()
    assert folder.parent == tmp_path / "formwright" and folder.name.startswith(f"sceptre-{install.SCEPTRE}-")
    why = install.find_or_install()
    assert isinstance(why, str), why
    assert f"cannot install sceptre {install.SCEPTRE}" in why and "sceptre==4.7.0" in why, why
    assert not folder.exists()  # a later run tries again from scratch


def test_a_sceptre_installed_elsewhere_is_run_from_its_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORMWRIGHT_TEST_SCEPTRE", "/opt/sceptre-target")
    found = install.find_or_install()
    assert isinstance(found, install.Sceptre)
    assert found.env["PYTHONPATH"].split(":")[0] == "/opt/sceptre-target"
