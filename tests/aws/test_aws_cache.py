"""Item 8 of issue 10 end to end: the applied cache is kept per target (kind, account, region and
endpoint). The same stacks reached through two endpoints (the local cloud, and the fault proxy in front
of it as an `aws` target) keep two records: neither reuses nor clobbers the other's."""

from __future__ import annotations

import json

from formwright.engine.group import StackGroup, cache_key
from formwright.engine.stack import prepare_stacks
from formwright.model import load_project

from .fault_proxy import FaultProxy, Faults
from .test_aws_waits import TEMPLATE, ProxiedTarget


def deploy(project, target) -> dict[str, str]:
    results = StackGroup(project, prepare_stacks(project, target=target), target).deploy()
    return {name: result.outcome for name, result in results.items()}


def test_two_endpoints_keep_their_own_applied_records(cloud, tmp_path) -> None:
    (tmp_path / "stack.json").write_text(json.dumps(TEMPLATE))
    (tmp_path / "formwright.yaml").write_text("name: c\nstacks:\n  a: {template: stack.json}\n")
    project = load_project(tmp_path)
    assert deploy(project, cloud) == {"a": "created"}
    with FaultProxy(cloud.endpoint, Faults(stale_after_execute=False)) as proxy:
        through = ProxiedTarget(proxy.endpoint)
        assert cache_key(project, through) != cache_key(project, cloud)
        # the local cloud's record is not this endpoint's: a change set is made (and finds nothing to do)
        assert deploy(project, through) == {"a": "no changes"}
        assert proxy.calls["CreateChangeSet"] == 1
    # … and it did not overwrite the local cloud's record: that target still skips the stack
    assert deploy(project, cloud) == {"a": "unchanged"}
    folders = sorted(p.relative_to(project.state_dir / "applied").parts[0]
                     for p in (project.state_dir / "applied").glob("*/a.json"))
    assert folders == sorted([cache_key(project, cloud), cache_key(project, through)])
