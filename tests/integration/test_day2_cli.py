"""Day-2 operations through the real CLI on the local cloud (issue 23): drift detected, shown and reverted;
stacks removed from formwright.yaml listed and pruned by their ownership tags; existing resources imported.

Out-of-band changes are made with boto3, as a person in the console would.
"""

from __future__ import annotations

import json
from pathlib import Path

QUEUE = """\
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 30
  Handle:
    Type: AWS::CloudFormation::WaitConditionHandle
Outputs:
  QueueUrl:
    Value: !Ref Queue
"""
TOPIC = "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\nOutputs:\n  Arn:\n    Value: !Ref Topic\n"
EXPORTER = ("Resources:\n  Topic:\n    Type: AWS::SNS::Topic\nOutputs:\n  Arn:\n    Value: !Ref Topic\n"
            "    Export: {Name: shared-topic}\n")
IMPORTER = ("Resources:\n  Param:\n    Type: AWS::SSM::Parameter\n    Properties:\n      Type: String\n"
            "      Value: !ImportValue shared-topic\n")
READER = ("Parameters:\n  Arn: {Type: String}\nResources:\n  Param:\n    Type: AWS::SSM::Parameter\n"
          "    Properties: {Type: String, Value: !Ref Arn}\n")
BUCKET = """\
Resources:
  Queue:
    Type: AWS::SQS::Queue
  Bucket:
    Type: AWS::S3::Bucket
    DeletionPolicy: Retain
    Properties:
      BucketName: fw-imported
"""


def project(folder: Path, name: str, stacks: dict[str, str], extra: dict[str, str] | None = None) -> Path:
    """A project of `stacks` (name -> template text); `extra` adds YAML lines under a stack."""
    (folder / "templates").mkdir(parents=True, exist_ok=True)
    lines = [f"name: {name}", "stacks:"]
    for stack, text in stacks.items():
        (folder / "templates" / f"{stack}.yaml").write_text(text)
        lines += [f"  {stack}:", f"    template: templates/{stack}.yaml"]
        lines += [f"    {line}" for line in (extra or {}).get(stack, "").splitlines()]
    (folder / "formwright.yaml").write_text("\n".join(lines) + "\n")
    return folder


def tags_of(cloud, stack: str) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in cloud.client("cloudformation").describe_stacks(
        StackName=stack)["Stacks"][0].get("Tags", [])}


def live(cloud) -> set[str]:
    return {s["StackName"] for s in cloud.client("cloudformation").describe_stacks()["Stacks"]
            if s["StackStatus"] != "DELETE_COMPLETE"}


def test_drift_made_out_of_band_is_detected_shown_and_reverted(tmp_path: Path, run_cli, cloud) -> None:
    folder = project(tmp_path / "p", "day", {"queue": QUEUE, "topic": TOPIC})
    assert run_cli("deploy", str(folder), "-y").code == 0
    assert run_cli("drift", str(folder)).code == 0  # in sync: exit 0
    url = cloud.client("cloudformation").describe_stacks(StackName="day-queue")["Stacks"][0]["Outputs"][0][
        "OutputValue"]
    cloud.client("sqs").set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "99"})

    found = run_cli("drift", str(folder), "--output", "json")
    assert found.code == 1, found.out + found.err  # exit 1: drifted (documented in --help)
    data = found.json()
    assert data["ok"] is True and data["drifted"] == ["queue"]
    queue = data["stacks"]["queue"]
    assert queue["status"] == "DRIFTED" and queue["in_sync"] == 0
    # a type drift detection does not check (a wait condition handle) is counted, with its type, never hidden
    handle = "AWS::CloudFormation::WaitConditionHandle"
    assert (queue["not_checked"], queue["not_checked_types"]) == (1, [handle])
    [resource] = queue["drifted"]
    assert (resource["logical_id"], resource["status"]) == ("Queue", "MODIFIED")
    assert [(p["path"], p["expected"], p["actual"]) for p in resource["properties"]] == [
        ("/VisibilityTimeout", "30", "99")]
    # an in-sync stack's resources are counted from ListStackResources' DriftInformation (no
    # DescribeStackResourceDrifts for it)
    assert (data["stacks"]["topic"]["status"], data["stacks"]["topic"]["in_sync"]) == ("IN_SYNC", 1)
    shown = run_cli("drift", str(folder), "queue")
    assert shown.code == 1 and "/VisibilityTimeout: 30 → 99" in shown.out, shown.out

    plan = run_cli("plan", str(folder))  # the plan says the stack drifted, once
    assert plan.code == 0 and plan.out.count("drifted (drift detection") == 1, plan.out

    reverted = run_cli("deploy", str(folder), "-y", "--revert-drift", "--output", "json")
    assert reverted.code == 0, reverted.out + reverted.err
    stack = reverted.json()["stacks"]["queue"]
    assert stack["outcome"] == "updated"
    [change] = stack["plan"]["resources"]
    [prop] = change["details"]
    # a drift-aware change set: the actual (drifted) value -> the template's
    assert (change["logical_id"], prop["name"], prop["old"], prop["new"], prop["drifted"]) == (
        "Queue", "VisibilityTimeout", "99", "30", True)
    attributes = cloud.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
    assert attributes["Attributes"]["VisibilityTimeout"] == "30"
    assert "drifted" not in run_cli("plan", str(folder)).out  # the revert reset the stack's drift status
    assert run_cli("drift", str(folder)).code == 0


def test_revert_drift_creates_again_a_resource_deleted_out_of_band(tmp_path: Path, run_cli, cloud) -> None:
    # a drift-aware change set brings a DELETED resource back, as CloudFormation does (its known failure for
    # one type, aws-cloudformation/cloudformation-coverage-roadmap#2455, expects exactly this); a plain
    # deploy of the unchanged template has nothing to change
    folder = project(tmp_path / "p", "gone", {"queue": QUEUE})
    assert run_cli("deploy", str(folder), "-y").code == 0
    cfn = cloud.client("cloudformation")
    url = cfn.describe_stacks(StackName="gone-queue")["Stacks"][0]["Outputs"][0]["OutputValue"]
    cloud.client("sqs").delete_queue(QueueUrl=url)

    found = run_cli("drift", str(folder), "--output", "json")
    assert found.code == 1, found.out + found.err
    [resource] = found.json()["stacks"]["queue"]["drifted"]
    assert (resource["logical_id"], resource["status"]) == ("Queue", "DELETED")
    from tests.cli.terminal import answer_in_terminal

    code, shown = answer_in_terminal("deploy", str(folder), "--revert-drift", answer="n")
    assert "+ add" in shown and "deleted outside CloudFormation: created again" in shown, shown
    assert code == 4 and "nothing changed" in shown, shown  # answered no: cancelled (exit 4)

    reverted = run_cli("deploy", str(folder), "-y", "--revert-drift", "--output", "json")
    assert reverted.code == 0, reverted.out + reverted.err
    stack = reverted.json()["stacks"]["queue"]
    assert stack["outcome"] == "updated"
    [change] = stack["plan"]["resources"]
    assert (change["action"], change["logical_id"], change["drift"]) == ("Add", "Queue", "DELETED")
    new_url = cfn.describe_stacks(StackName="gone-queue")["Stacks"][0]["Outputs"][0]["OutputValue"]
    name = new_url.rsplit("/", 1)[1]
    # created again (the queue URL the local cloud answers names its own endpoint, not the output's host)
    assert [u for u in cloud.client("sqs").list_queues().get("QueueUrls", []) if u.endswith("/" + name)]
    attributes = cloud.client("sqs").get_queue_attributes(QueueUrl=cloud.client("sqs").get_queue_url(
        QueueName=name)["QueueUrl"], AttributeNames=["VisibilityTimeout"])
    assert attributes["Attributes"]["VisibilityTimeout"] == "30"  # with the template's properties
    assert run_cli("drift", str(folder)).code == 0


def test_a_stack_removed_from_the_project_is_listed_and_pruned_by_its_tags(tmp_path: Path, run_cli,
                                                                            cloud) -> None:
    cfn = cloud.client("cloudformation")
    # made before stacks were tagged: same name and template, no formwright tags
    cfn.create_stack(StackName="day-queue", TemplateBody=QUEUE)
    folder = project(tmp_path / "p", "day", {"queue": QUEUE, "old": TOPIC})
    first = run_cli("deploy", str(folder), "-y", "--output", "json")
    assert first.code == 0, first.out + first.err
    # the untagged stack is updated with its tags: a tag change is a real update (not the applied cache's
    # "unchanged")
    assert first.json()["stacks"]["queue"]["outcome"] == "updated"
    assert tags_of(cloud, "day-queue") == {"formwright:project": "day", "formwright:stack": "queue"}
    assert tags_of(cloud, "day-old")["formwright:stack"] == "old"
    # another project's stack of a similar name, and a stack named like ours but made by hand
    other = project(tmp_path / "other", "day-old", {"old": TOPIC})
    assert run_cli("deploy", str(other), "-y").code == 0  # the stack day-old-old
    cfn.create_stack(StackName="day-manual", TemplateBody=TOPIC)

    project(folder, "day", {"queue": QUEUE})  # `old` taken out of formwright.yaml
    plan = run_cli("plan", str(folder), "--output", "json")
    assert plan.code == 0, plan.err
    assert [(r["name"], r["stack_name"], r["reason"]) for r in plan.json()["remove"]] == [
        ("old", "day-old", "no longer in formwright.yaml")]
    text = run_cli("plan", str(folder))
    assert "- remove (no longer in formwright.yaml)" in text.out and "day-manual" not in text.out, text.out

    kept = run_cli("deploy", str(folder), "-y", "--output", "json")  # without --prune: nothing deleted
    assert kept.code == 0 and "day-old" in live(cloud)
    pruned = run_cli("deploy", str(folder), "-y", "--prune", "--output", "json")
    assert pruned.code == 0, pruned.out + pruned.err
    assert pruned.json()["stacks"]["old"]["outcome"] == "deleted"
    assert live(cloud) == {"day-queue", "day-old-old", "day-manual"}
    assert run_cli("plan", str(folder), "--output", "json").json()["remove"] == []


def test_the_orphan_check_reuses_a_listing_the_plan_read(tmp_path: Path, cloud) -> None:
    # a plan of LISTING_FROM stacks or more reads their target's DescribeStacks listing
    # (StackGroup.listings); its orphan check takes that listing instead of listing the stacks again
    from formwright.cloud.session import Targets
    from formwright.engine.cfn import StackInfo
    from formwright.engine.prune import orphans
    from formwright.model.project import load_project

    loaded = load_project(project(tmp_path, "day", {"queue": QUEUE}))
    targets = Targets("local")
    target = targets.get(loaded.target)
    tags = {"formwright:project": "day", "formwright:stack": "old"}
    listed = [StackInfo(name="day-old", stack_id="arn:old", status="CREATE_COMPLETE", tags=tags),
              StackInfo(name="day-queue", stack_id="arn:queue", status="CREATE_COMPLETE",
                        tags={**tags, "formwright:stack": "queue"})]
    # the cloud holds no stack: "day-old" is found only in the listing given
    assert [o.info.name for o in orphans(loaded, targets, {id(target): listed})] == ["day-old"]
    assert orphans(loaded, targets) == []  # without it: listed from the cloud, empty


def test_prune_refuses_a_stack_whose_export_is_still_imported(tmp_path: Path, run_cli, cloud) -> None:
    folder = project(tmp_path / "p", "exp", {"exporter": EXPORTER, "importer": IMPORTER})
    assert run_cli("deploy", str(folder), "-y").code == 0
    project(folder, "exp", {"importer": IMPORTER})
    refused = run_cli("deploy", str(folder), "-y", "--prune", "--output", "json")
    assert refused.code == 1, refused.out
    result = refused.json()["stacks"]["exporter"]
    assert result["outcome"] == "failed" and "still imported by exp-importer" in result["error"]
    assert "exp-exporter" in live(cloud)


def test_an_obsolete_stack_is_pruned_and_one_still_read_is_refused(tmp_path: Path, run_cli, cloud) -> None:
    folder = project(tmp_path / "p", "obs", {"topic": TOPIC, "reader": READER},
                     {"reader": "parameters:\n  Arn: !ref topic.outputs.Arn"})
    assert run_cli("deploy", str(folder), "-y").code == 0
    text = (folder / "formwright.yaml").read_text()
    (folder / "formwright.yaml").write_text(text.replace("templates/topic.yaml",
                                                         "templates/topic.yaml\n    obsolete: true"))
    refused = run_cli("plan", str(folder))
    assert refused.code == 2 and "Traceback" not in refused.err
    assert "formwright.yaml:9: !ref topic.outputs.Arn reads stack 'topic', which is `obsolete: true`" in \
        refused.err, refused.err
    # the reader stops reading it: the obsolete stack is listed, then pruned; its definition stays
    (folder / "formwright.yaml").write_text(text.replace("templates/topic.yaml",
                                                         "templates/topic.yaml\n    obsolete: true")
                                            .replace("  Arn: !ref topic.outputs.Arn", "  Arn: none"))
    plan = run_cli("plan", str(folder), "--output", "json")
    assert [(r["name"], r["reason"]) for r in plan.json()["remove"]] == [("topic", "obsolete: true")]
    assert run_cli("deploy", str(folder), "-y", "--prune").code == 0
    assert live(cloud) == {"obs-reader"}


def test_delete_of_the_project_removes_its_obsolete_stacks_first(tmp_path: Path, run_cli, cloud) -> None:
    # sceptre's `delete` deletes every stack its config holds, obsolete ones included: an obsolete stack is
    # still the project's. Its importer goes first (ListImports), else the exporter's delete is refused;
    # a stack taken out of formwright.yaml is listed and left to `deploy --prune`
    exporter = EXPORTER.replace("shared-topic", "tear-topic")
    importer = IMPORTER.replace("shared-topic", "tear-topic")
    folder = project(tmp_path / "p", "tear", {"exporter": exporter, "importer": importer, "gone": TOPIC})
    assert run_cli("deploy", str(folder), "-y").code == 0
    other = project(tmp_path / "other", "tear-other", {"importer": TOPIC})  # another project's, alike
    assert run_cli("deploy", str(other), "-y").code == 0
    project(folder, "tear", {"exporter": exporter, "importer": importer}, {"importer": "obsolete: true"})

    deleted = run_cli("delete", str(folder), "-y")
    assert deleted.code == 0, deleted.out + deleted.err
    said = deleted.out
    assert said.index("tear-importer (obsolete: true)") < said.index("tear-exporter"), said
    assert "left: tear-gone (no longer in formwright.yaml" in said, said
    assert live(cloud) >= {"tear-gone", "tear-other-importer"}
    assert not live(cloud) & {"tear-importer", "tear-exporter"}
    pruned = run_cli("delete", str(folder), "-y", "--prune", "--output", "json")  # --prune: those too
    assert pruned.code == 0 and pruned.json()["left"] == [], pruned.out + pruned.err
    assert pruned.json()["stacks"]["gone"]["outcome"] == "deleted"
    assert "tear-gone" not in live(cloud) and "tear-other-importer" in live(cloud)


def test_a_bucket_made_by_hand_is_imported_with_its_objects(tmp_path: Path, run_cli, cloud) -> None:
    folder = project(tmp_path / "p", "imp", {"store": "Resources:\n  Queue:\n    Type: AWS::SQS::Queue\n"})
    assert run_cli("deploy", str(folder), "-y").code == 0
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket="fw-imported")
    s3.put_object(Bucket="fw-imported", Key="kept.txt", Body=b"made before the import")
    (folder / "templates" / "store.yaml").write_text(BUCKET.replace("    DeletionPolicy: Retain\n", ""))
    project(folder, "imp", {"store": BUCKET.replace("    DeletionPolicy: Retain\n", "")},
            {"store": "import:\n  Bucket: {BucketName: fw-imported}"})
    cfn = cloud.client("cloudformation")
    before = (cfn.describe_stack_events(StackName="imp-store")["StackEvents"],
              cfn.list_change_sets(StackName="imp-store")["Summaries"])

    refused = run_cli("deploy", str(folder), "-y")  # CloudFormation's rule, checked before any call
    assert refused.code == 2 and "Traceback" not in refused.err
    assert "store.yaml:4: stack 'store': Bucket (AWS::S3::Bucket) to import has no DeletionPolicy" in \
        refused.out + refused.err
    assert (cfn.describe_stack_events(StackName="imp-store")["StackEvents"],
            cfn.list_change_sets(StackName="imp-store")["Summaries"]) == before  # no change set was asked for

    project(folder, "imp", {"store": BUCKET}, {"store": "import:\n  Bucket: {BucketName: fw-imported}"})
    plan = run_cli("plan", str(folder))
    assert "← import" in plan.out and "Bucket" in plan.out, plan.out
    done = run_cli("deploy", str(folder), "-y", "--output", "json")
    assert done.code == 0, done.out + done.err
    assert done.json()["stacks"]["store"]["outcome"] == "imported"
    resources = {r["LogicalResourceId"]: r for r in cfn.describe_stack_resources(
        StackName="imp-store")["StackResources"]}
    assert resources["Bucket"]["PhysicalResourceId"] == "fw-imported"
    assert s3.get_object(Bucket="fw-imported", Key="kept.txt")["Body"].read() == b"made before the import"
    again = run_cli("deploy", str(folder), "-y", "--output", "json")
    assert again.json()["stacks"]["store"]["outcome"] == "unchanged"


def test_formwright_import_names_the_identifier_and_refuses_other_changes(tmp_path: Path, run_cli,
                                                                          cloud) -> None:
    folder = project(tmp_path / "p", "cmd", {"store": "Resources:\n  Queue:\n    Type: AWS::SQS::Queue\n"})
    assert run_cli("deploy", str(folder), "-y").code == 0
    cloud.client("s3").create_bucket(Bucket="fw-imported")
    (folder / "templates" / "store.yaml").write_text(BUCKET.replace("Type: AWS::SQS::Queue",
                                                                    "Type: AWS::SQS::Queue\n    Properties:\n"
                                                                    "      DelaySeconds: 5"))
    refused = run_cli("import", str(folder), "store", "Bucket=fw-imported", "-y")
    assert refused.code == 2 and "Queue differs from the deployed template" in refused.out + refused.err
    (folder / "templates" / "store.yaml").write_text(BUCKET)
    missing = run_cli("import", str(folder), "store", "Bucket=fw-missing", "-y", "--output", "json")
    assert missing.code == 1  # as CloudFormation fails: the change set names the identifier
    assert "fw-missing" in missing.json()["stacks"]["store"]["error"]
    done = run_cli("import", str(folder), "store", "Bucket=fw-imported", "-y", "--output", "json")
    assert done.code == 0, done.out + done.err
    assert done.json()["stacks"]["store"]["outcome"] == "imported"


def test_import_existing_turns_a_name_clash_into_an_import(tmp_path: Path, run_cli, cloud) -> None:
    cloud.client("s3").create_bucket(Bucket="fw-imported")
    folder = project(tmp_path / "p", "clash", {"store": BUCKET})
    clash = run_cli("deploy", str(folder), "-y", "--output", "json")
    assert clash.code == 1 and "fw-imported" in json.dumps(clash.json()["stacks"]["store"]), clash.out
    project(folder, "clash", {"store": BUCKET}, {"store": "import_existing: true"})
    done = run_cli("deploy", str(folder), "-y", "--output", "json")
    assert done.code == 0, done.out + done.err
    resources = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloud.client(
        "cloudformation").describe_stack_resources(StackName="clash-store")["StackResources"]}
    assert resources["Bucket"] == "fw-imported" and "Queue" in resources
