"""The garbage collector is paused during a transform and restored as it was."""

from __future__ import annotations

import gc

from formwright.transform.collector import collector_paused


def test_paused_then_restored_when_nested():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_left_disabled_when_it_was_disabled():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_restored_after_an_error():
    try:
        with collector_paused():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()
