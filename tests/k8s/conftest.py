"""A real kube-apiserver and etcd per test session (tests/k8s/cluster.py), started on free loopback ports
with RBAC on, and stopped at the end. Built once per machine by `make k8s`; the tests skip, saying why, only
where it could not be built."""

from __future__ import annotations

import pytest

from . import cluster
from .sources import Storage


@pytest.fixture(scope="session")
def apiserver(tmp_path_factory: pytest.TempPathFactory):
    """The running API server (admin access through `.kubectl()` and `.request()`)."""
    why = cluster.unavailable()
    if why:
        pytest.skip(why)
    server = cluster.start(tmp_path_factory.mktemp("kube"))
    yield server
    server.stop()


@pytest.fixture
def storage(tmp_path):
    """The source-controller's artifact storage, served on 127.0.0.1 for one test."""
    found = Storage(tmp_path / "artifacts")
    yield found
    found.close()
