"""The operator's start-up choices that need no cluster: the scope read from `kopf run`'s command line
(for the permission check) and the peering priority (the oldest replica acts)."""

from __future__ import annotations

from formwright.sync.k8s import operator as op
from formwright.sync.k8s import permissions


def test_the_scope_is_read_from_kopf_runs_command_line():
    assert permissions.scope_from_argv(["kopf", "run", "-m", "m", "--all-namespaces"]) == [None]
    assert permissions.scope_from_argv(["kopf", "run", "-A"]) == [None]
    assert permissions.scope_from_argv(["kopf", "run", "--namespace=a", "-n", "b"]) == ["a", "b"]
    assert permissions.scope_from_argv(["kopf", "run", "-m", "m"]) == [None]  # kopf's default: cluster-wide


def test_a_replica_started_earlier_has_the_higher_priority_and_ties_differ():
    assert op.peering_priority(1_000) > op.peering_priority(1_001)
    # kopf pauses every replica that sees an equal priority: two replicas started in the same second differ
    same_second = {op.peering_priority(2_000) for _ in range(50)}
    assert len(same_second) > 1


def test_namespaced_operators_need_namespaced_peering_and_cluster_wide_ones_cluster_peering():
    cluster = {(p.resource, p.verb) for p in permissions.required(clusterwide=True)}
    namespaced = {(p.resource, p.verb) for p in permissions.required(clusterwide=False)}
    assert ("clusterkopfpeerings", "create") in cluster and ("kopfpeerings", "create") not in cluster
    assert ("kopfpeerings", "patch") in namespaced and ("clusterkopfpeerings", "patch") not in namespaced
