"""A watch whose resourceVersion expired (410 Gone) is resumed without a missed object.

A second API server is started for this, configured so that expiry happens within seconds instead of
minutes: no watch cache (watches are served by etcd itself) and etcd compacted every second, so a watch the
server ends (kopf's `timeoutSeconds`, FORMWRIGHT_SYNC_WATCH_TIMEOUT) and resumes from the last version it saw
gets "410 Gone: too old resource version" once other writes moved etcd on (Kubernetes' API concepts page,
"Efficient detection of changes": a client must then list again). Objects are created before, between and
after those expiries; every one of them must be reconciled. `--debug` is added to the operator's command to
read kopf's own line for a 410 ("Restarting the watch-stream").
"""

from __future__ import annotations

import time

import pytest

from . import cluster, install
from .test_operator import FIXTURES, apply_yaml, get, ready, sources_in, stack_object

pytestmark = [pytest.mark.k8s, pytest.mark.cloud]


@pytest.fixture(scope="module")
def compacting(tmp_path_factory):
    why = cluster.unavailable()
    if why:
        pytest.skip(why)
    server = cluster.start(tmp_path_factory.mktemp("kube-compacting"),
                           ["--watch-cache=false", "--etcd-compaction-interval=1s"])
    server.kubectl("apply", "-f", str(FIXTURES / "gitrepository-crd.yaml"))
    server.kubectl("apply", "-k", str(install.DEPLOY / "overlays" / "cluster-wide"))
    server.kubectl("wait", "--for=condition=Established", "--timeout=60s", "--all", "crd")
    yield server
    server.stop()


def test_an_expired_watch_is_listed_again_and_no_object_is_missed(compacting, storage, cloud, tmp_path):
    from tests.sync.harness import wait_for

    compacting.kubectl("create", "namespace", "expiry", check=False)
    sources_in(compacting, storage, "expiry", 34)
    overlay = install.DEPLOY / "overlays" / "cluster-wide"
    replica = install.replica(compacting, overlay, "formwright-sync-system", tmp_path / "replica",
                              env={"FORMWRIGHT_SYNC_WATCH_TIMEOUT": "2"},
                              extra_args=["--debug"])
    try:
        names = []
        for i in range(6):
            apply_yaml(compacting, [stack_object("expiry", f"e{i}", f"fw-k8s-expiry-{i}")])
            names.append(f"e{i}")
            time.sleep(1.5)  # spread the objects across the watch's expiries (not a timing assertion)
        wait_for(lambda: "Restarting the watch-stream" in replica.text(), "a 410 Gone seen by the operator",
                 120)
        apply_yaml(compacting, [stack_object("expiry", "after", "fw-k8s-expiry-after")])
        names.append("after")
        for name in names:
            wait_for(lambda name=name: ready(get(compacting, "expiry", name)).get("status") == "True",
                     f"{name} Ready", 180)
    finally:
        replica.stop()
