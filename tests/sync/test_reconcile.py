"""The reconcile loop on the local cloud, with real git repositories and a real SQLite status store."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.sync.naming import change_set_name
from formwright.sync.status_store import change_set_name_of

from .conftest import QUEUE, Repo, objects_yaml
from .harness import Harness

pytestmark = pytest.mark.cloud

TWO_QUEUES = QUEUE.replace("Outputs:", """  Second:
    Type: AWS::SQS::Queue
Outputs:""")


def setup(tmp_path: Path, repo: Repo, cloud, stacks: list[dict]) -> Harness:
    folder = tmp_path / "objects"
    folder.mkdir(exist_ok=True)
    (folder / "stacks.yaml").write_text(objects_yaml(repo.url, stacks))
    return Harness(folder, cloud, tmp_path / "state")


def resources(harness: Harness, stack: str) -> set[str]:
    data = harness.cfn.client.describe_stack_resources(StackName=stack)["StackResources"]
    return {r["LogicalResourceId"] for r in data}


def test_create_then_update_by_commit_then_no_change_commit(tmp_path, repo, cloud):
    sha = repo.commit({"template.yaml": QUEUE})
    h = setup(tmp_path, repo, cloud, [{"name": "app"}])
    st = h.settle("app")
    assert st.ready == "True" and st.reason == "Succeeded"
    assert st.last_applied_revision == f"main@sha1:{sha}"
    assert change_set_name_of(st.last_applied_change_set) == change_set_name(1, f"main@sha1:{sha}")
    assert h.cfn.describe("sync-app").status == "CREATE_COMPLETE"

    sha2 = repo.commit({"template.yaml": TWO_QUEUES}, "second queue")
    st = h.settle("app")
    assert st.ready == "True" and st.last_applied_revision == f"main@sha1:{sha2}"
    assert change_set_name_of(st.last_applied_change_set) == f"flux-1-main-sha1-{sha2}"
    assert resources(h, "sync-app") == {"Queue", "Second"}
    assert h.cfn.describe("sync-app").status == "UPDATE_COMPLETE"

    creates = h.counter.calls["create_change_set"]
    sha3 = repo.commit({"README.md": "docs only\n"}, "docs")
    st = h.settle("app")
    assert st.ready == "True" and st.last_applied_revision == f"main@sha1:{sha3}"
    assert h.counter.calls["create_change_set"] == creates  # the template did not change: no change set
    assert change_set_name_of(st.last_applied_change_set) == f"flux-1-main-sha1-{sha2}"

    h.once("app")  # steady state: nothing written
    assert h.counter.writes == creates * 2  # each apply: create + execute


def test_parameter_change_bumps_generation(tmp_path, repo, cloud):
    sha = repo.commit({"template.yaml": QUEUE})
    h = setup(tmp_path, repo, cloud, [{"name": "app"}])
    h.settle("app")
    (h.folder / "stacks.yaml").write_text(objects_yaml(repo.url, [
        {"name": "app", "stackParameters": [{"key": "Suffix", "value": "b"}]}]))
    st = h.settle("app")
    assert st.ready == "True" and st.observed_generation == 2
    assert change_set_name_of(st.last_applied_change_set) == change_set_name(2, f"main@sha1:{sha}")
    params = h.cfn.describe("sync-app").parameters
    assert params["Suffix"] == "b"


def test_depends_on_waits_for_ready(tmp_path, repo, cloud):
    repo.commit({"template.yaml": QUEUE})
    h = setup(tmp_path, repo, cloud, [{"name": "db"}, {"name": "web", "dependsOn": [{"name": "db"}]}])
    out = h.once("web")
    assert out.status.ready == "False" and out.status.reason == "DependencyNotReady"
    assert out.requeue == 1.0
    assert h.cfn.describe("sync-web") is None
    h.settle("db")
    assert h.settle("web").ready == "True"


def test_suspended_does_nothing(tmp_path, repo, cloud):
    repo.commit({"template.yaml": QUEUE})
    h = setup(tmp_path, repo, cloud, [{"name": "app"}])
    out = h.once("app", suspended=True)
    assert out.requeue is None and h.counter.total == 0
    assert h.cfn.describe("sync-app") is None


def test_broken_template_then_fixed_by_next_commit(tmp_path, repo, cloud):
    repo.commit({"template.yaml": "Resources:\n  Queue:\n    Type: [unclosed\n"})
    h = setup(tmp_path, repo, cloud, [{"name": "app"}])
    st = h.settle("app")
    assert st.ready == "False" and st.reason == "ArtifactFailed"
    assert "template.yaml@" in st.message and "not valid YAML" in st.message
    # a template CloudFormation itself rejects: a change set that fails
    repo.commit({"template.yaml": "Resources:\n  Queue:\n    Type: AWS::SQS::Queue\n    Properties:\n"
                                  "      QueueName: !GetAtt Nope.Arn\n"})
    st = h.settle("app")
    # the local cloud refuses the change set itself (ValidationError), as CloudFormation does: the
    # controller's CloudFormationApiCallFailed "Failed to create a change set", the error in its Warning event
    # "Failed to reconcile stack: …" (cloudformationstack_controller.go, reconcile)
    assert (st.ready, st.reason) == ("False", "CloudFormationApiCallFailed"), st.message
    assert st.message == "Failed to create a change set for stack 'sync-app'"
    kind, message = h.events("app")[-1]
    assert kind == "Warning" and message.startswith("Failed to reconcile stack: ") and "Nope" in message
    sha = repo.commit({"template.yaml": QUEUE}, "fix")
    st = h.settle("app")
    assert st.ready == "True" and st.last_applied_revision == f"main@sha1:{sha}"


def test_template_path_cannot_escape_checkout(tmp_path, repo, cloud):
    (tmp_path / "secret.yaml").write_text(QUEUE)
    repo.commit({"template.yaml": QUEUE})
    (repo.path / "link.yaml").symlink_to(tmp_path / "secret.yaml")
    repo.commit({}, "symlink out")
    h = setup(tmp_path, repo, cloud, [{"name": "app", "templatePath": "link.yaml"}])
    st = h.settle("app")
    assert st.ready == "False" and st.reason == "ArtifactFailed"
    assert "link.yaml" in st.message


def test_deletion_with_and_without_destroy(tmp_path, repo, cloud):
    repo.commit({"template.yaml": QUEUE})
    h = setup(tmp_path, repo, cloud, [{"name": "keep"}, {"name": "drop", "destroyStackOnDeletion": True}])
    h.settle("keep")
    h.settle("drop")
    kept = h.reconciler.delete("default/keep", "sync-keep", False, h.status("keep"))
    assert kept.requeue is None and h.cfn.describe("sync-keep") is not None
    out = h.reconciler.delete("default/drop", "sync-drop", True, h.status("drop"))
    while out.requeue is not None:
        out = h.reconciler.delete("default/drop", "sync-drop", True, out.status)
    assert h.cfn.describe("sync-drop") is None


def test_large_template_goes_through_s3(tmp_path, repo, cloud):
    padding = "".join(f"  P{i}:\n    Type: String\n    Default: {'x' * 200}\n" for i in range(250))
    big = QUEUE.replace("Parameters:\n", "Parameters:\n" + padding)
    assert len(big.encode()) > 51_200
    repo.commit({"template.yaml": big})
    h = setup(tmp_path, repo, cloud, [{"name": "big"}])
    st = h.settle("big")
    assert st.ready == "True", st.message
    assert h.counter.calls["put_object"] == 1


def test_restart_between_write_ahead_and_execute_resumes_without_reapply(tmp_path, repo, cloud):
    """A crash right after the change set was created: a new reconciler executes that one, creates none."""
    repo.commit({"template.yaml": QUEUE})
    h = setup(tmp_path, repo, cloud, [{"name": "app"}])

    class Crash(BaseException):
        pass

    real = h.cfn.call

    def crashing(operation, **kwargs):
        if operation == "execute_change_set":
            raise Crash()
        return real(operation, **kwargs)

    h.cfn.call = crashing
    with pytest.raises(Crash):
        h.once("app")
    assert h.status("app").phase == "executing"  # written before the call
    h2 = Harness(h.folder, cloud, tmp_path / "state")
    st = h2.settle("app")
    assert st.ready == "True"
    assert h2.counter.calls["create_change_set"] == 0 and h2.counter.calls["execute_change_set"] == 1



PROJECT = """\
name: synced
region: us-east-1
stacks:
  queue:
    template: templates/queue.yaml
  app:
    template: templates/queue.yaml
    stack_name: synced-app
    depends_on: [queue]
"""


def test_project_path_deploys_a_whole_project_through_stack_group(tmp_path, repo, cloud):
    sha = repo.commit({"infra/formwright.yaml": PROJECT, "infra/templates/queue.yaml": QUEUE})
    h = setup(tmp_path, repo, cloud, [{"name": "proj", "projectPath": "infra"}])
    st = h.settle("proj")
    assert st.ready == "True", st.message
    assert st.last_applied_revision == f"main@sha1:{sha}" and "app created" in st.message
    assert h.cfn.describe("synced-queue").status == "CREATE_COMPLETE"
    assert h.cfn.describe("synced-app").status == "CREATE_COMPLETE"
    writes = h.counter.writes
    h.once("proj")  # same revision (forced pass): the applied cache skips both stacks
    assert h.counter.writes == writes
    sha2 = repo.commit({"README.md": "x"}, "docs")
    st = h.settle("proj")
    assert st.last_applied_revision == f"main@sha1:{sha2}" and h.counter.calls["create_change_set"] == 2


def deleted_in_order(monkeypatch) -> list[str]:
    """Spy on StackRunner.delete (what StackGroup.delete() calls per stack): the order stacks are deleted."""
    from formwright.engine.runner import StackRunner

    order: list[str] = []
    real = StackRunner.delete

    def spy(self, stack, importers, **kwargs):
        order.append(stack.name)
        return real(self, stack, importers, **kwargs)

    monkeypatch.setattr(StackRunner, "delete", spy)
    return order


def test_project_path_deletion_deletes_its_stacks_in_reverse_order(tmp_path, repo, cloud, monkeypatch):
    import shutil

    repo.commit({"infra/formwright.yaml": PROJECT, "infra/templates/queue.yaml": QUEUE})
    h = setup(
        tmp_path, repo, cloud, [{"name": "proj", "projectPath": "infra", "destroyStackOnDeletion": True}]
    )
    assert h.settle("proj").ready == "True"
    # a later revision adds a stack: deletion must delete what was deployed last, all three
    three = PROJECT + "  extra:\n    template: templates/queue.yaml\n    depends_on: [app]\n"
    repo.commit({"infra/formwright.yaml": three}, "a third stack")
    assert h.settle("proj").ready == "True"
    assert h.cfn.describe("synced-extra").status == "CREATE_COMPLETE"
    # the object is gone, and so are its source and every checkout: the kept copy is what deletion loads
    shutil.rmtree(repo.path)
    shutil.rmtree(tmp_path / "state" / "sources")
    order = deleted_in_order(monkeypatch)
    out = h.reconciler.delete_project("default/proj", "infra", True, h.status("proj"))
    assert out.requeue is None, out.status.message
    assert out.status.ready == "True" and "synced-app deleted" in out.status.message
    assert order == ["extra", "app", "queue"]  # dependents first
    for name in ("synced-queue", "synced-app", "synced-extra"):
        assert h.cfn.describe(name) is None
    assert not h.reconciler.has_project_snapshot("default/proj")


def test_project_path_deletion_without_destroy_leaves_the_stacks(tmp_path, repo, cloud, monkeypatch):
    repo.commit({"infra/formwright.yaml": PROJECT, "infra/templates/queue.yaml": QUEUE})
    h = setup(tmp_path, repo, cloud, [{"name": "proj", "projectPath": "infra"}])
    assert h.settle("proj").ready == "True"
    order = deleted_in_order(monkeypatch)
    out = h.reconciler.delete_project("default/proj", "infra", False, h.status("proj"))
    assert out.requeue is None and order == []
    assert h.cfn.describe("synced-queue") is not None and h.cfn.describe("synced-app") is not None
    assert not h.reconciler.has_project_snapshot("default/proj")


def test_project_path_deletion_failure_is_reported_and_retried(tmp_path, repo, cloud):
    """A stack that cannot be deleted (its export is imported outside the project): Ready=False, retried."""
    exporting = QUEUE.replace("    Value: !Ref Queue\n", "    Value: !Ref Queue\n    Export:\n"
                                 "      Name: !Sub '${AWS::StackName}-url'\n")
    repo.commit({"infra/formwright.yaml": PROJECT, "infra/templates/queue.yaml": exporting})
    h = setup(
        tmp_path, repo, cloud, [{"name": "proj", "projectPath": "infra", "destroyStackOnDeletion": True}]
    )
    st = h.settle("proj")
    assert st.ready == "True", st.message
    outsider = {"Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {
        "Name": "outsider", "Type": "String", "Value": {"Fn::ImportValue": "synced-queue-url"}}}}}
    import json

    h.cfn.client.create_stack(StackName="outsider", TemplateBody=json.dumps(outsider))
    out = h.reconciler.delete_project("default/proj", "infra", True, h.status("proj"))
    assert out.requeue is not None and out.status.ready == "False"
    assert "still imported by outsider" in out.status.message, out.status.message
    assert h.cfn.describe("synced-app") is None  # the dependent went first
    assert h.cfn.describe("synced-queue") is not None
    assert h.reconciler.has_project_snapshot("default/proj")  # kept for the retry
    h.cfn.client.delete_stack(StackName="outsider")
    out = h.reconciler.delete_project("default/proj", "infra", True, out.status)
    assert out.requeue is None and h.cfn.describe("synced-queue") is None


@pytest.mark.parametrize("crash_after", [False, True], ids=["before-create-returns", "after-create-returns"])
def test_restart_around_create_change_set_of_an_update_applies_it_once(tmp_path, repo, cloud, crash_after):
    """A crash while the second change set is being created (the state still holds the first one's ARN):
    the restarted reconciler must not take the first, executed change set for this one."""
    repo.commit({"template.yaml": QUEUE})
    h = setup(tmp_path, repo, cloud, [{"name": "app"}])
    assert h.settle("app").ready == "True"
    sha = repo.commit({"template.yaml": TWO_QUEUES}, "second queue")

    class Crash(BaseException):
        pass

    real = h.cfn.create_change_set

    def crashing(**kwargs):
        if crash_after:
            real(**kwargs)
        raise Crash()

    h.cfn.create_change_set = crashing
    with pytest.raises(Crash):
        h.once("app")
    assert h.status("app").phase == "created"
    h2 = Harness(h.folder, cloud, tmp_path / "state")
    st = h2.settle("app")
    assert st.ready == "True" and st.last_applied_revision == f"main@sha1:{sha}", st.message
    assert resources(h2, "sync-app") == {"Queue", "Second"}  # really applied, not just claimed
    assert h2.counter.calls["execute_change_set"] == 1
    events = h2.cfn.client.describe_stack_events(StackName="sync-app")["StackEvents"]
    assert sum(1 for e in events if e["LogicalResourceId"] == "sync-app" and
               e["ResourceStatus"] == "UPDATE_COMPLETE") == 1


COMMAND_PROJECT = """\
name: cmd
region: us-east-1
stacks:
  queue:
    template: templates/queue.yaml
    parameters:
      Suffix: !cmd [printf, b]
"""


@pytest.mark.parametrize("allowed", [False, True])
def test_a_synced_projects_cmd_runs_only_when_the_object_opts_in(tmp_path, repo, cloud, allowed):
    """Issue 24: a `!cmd` resolver is the repository's code on the reconciler host: refused unless the
    CloudFormationStack says `allowCommands: true`."""
    repo.commit({"infra/formwright.yaml": COMMAND_PROJECT, "infra/templates/queue.yaml": QUEUE})
    spec = {"name": "proj", "projectPath": "infra", **({"allowCommands": True} if allowed else {})}
    h = setup(tmp_path, repo, cloud, [spec])
    st = h.settle("proj") if allowed else h.once("proj").status
    if allowed:
        assert st.ready == "True", st.message
        assert h.cfn.describe("cmd-queue").status == "CREATE_COMPLETE"
    else:
        assert st.ready == "False" and "refused by the sandbox" in st.message
        assert h.counter.writes == 0
