"""The TOSCA corpus's `runs` column (tosca_runs.py): which cases it leaves out, and why, and how the score
line counts them (fast: no deploy, no boot; the corpus run itself:
`make conformance`, or `run.py tosca --runs`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the runner's sibling modules, as run.py does

import run
import tosca_runs
from common import Outcome

from formwright.cloud.instances import boot, refusals

CANNOT_RUN = {"AWS::EC2::Instance": "cfn-signal", "AWS::ElasticBeanstalk::Environment": "Beanstalk"}
WINDOWS = "/aws/service/ami-windows-latest/Windows_Server-2022-English-Full-Base"
UBUNTU = "/aws/service/canonical/ubuntu/server/22.04/stable/current/amd64/hvm/ebs-gp2/ami-id"


@pytest.fixture(autouse=True)
def _machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(boot, "unavailable", lambda: None)  # as on a machine that boots instances
    monkeypatch.setattr(refusals.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(refusals, "debian_packages", lambda: frozenset({"apache2", "git"}))


def _template(image: str, **instance: object) -> dict:
    return {"Parameters": {"ImageId": {"Type": "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>",
                                       "Default": image}},
            "Resources": {"Web": {"Type": "AWS::EC2::Instance", **instance,
                                  "Properties": {"ImageId": {"Ref": "ImageId"}, "InstanceType": "t3.micro"}}}}


def test_a_linux_instance_with_debian_packages_is_served() -> None:
    init = {"AWS::CloudFormation::Init": {"config": {"packages": {"yum": {"httpd": []}}}}}
    assert tosca_runs.cannot_serve(_template(UBUNTU, Metadata=init), CANNOT_RUN) is None


def test_what_the_image_cannot_serve_is_left_out_with_the_reason() -> None:
    label, reason = tosca_runs.cannot_serve(_template(WINDOWS), CANNOT_RUN)
    assert label == "Windows"
    assert reason.startswith(f"Web: ImageId the public image {WINDOWS} is a Windows image")
    init = {"AWS::CloudFormation::Init": {"config": {"packages": {"yum": {"amazon-linux-extras": []}}}}}
    label, reason = tosca_runs.cannot_serve(_template(UBUNTU, Metadata=init), CANNOT_RUN)
    assert label == "yum-only packages"
    assert "yum packages amazon-linux-extras have no Debian package" in reason
    assert tosca_runs.cannot_serve({"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}, CANNOT_RUN) == (
        "no instance", "the template has no instance to boot (nor an RDS engine the local cloud boots)")
    database = {"Resources": {"Db": {"Type": "AWS::RDS::DBInstance", "Properties": {"Engine": "mysql"}}}}
    assert tosca_runs.cannot_serve(database, CANNOT_RUN) is None
    beanstalk = _template(UBUNTU)
    beanstalk["Resources"]["App"] = {"Type": "AWS::ElasticBeanstalk::Environment"}
    assert tosca_runs.cannot_serve(beanstalk, CANNOT_RUN) == (
        "cannot run", "the local cloud cannot run AWS::ElasticBeanstalk::Environment (Beanstalk)")


def test_the_score_line_counts_the_cases_run_and_lists_the_others_by_reason() -> None:
    outcomes = [Outcome("a", "transform", True), Outcome("a", "runs", True),
                Outcome("b", "transform", True), tosca_runs.not_run("b", "Windows", "Web: ... Windows image"),
                Outcome("c", "transform", True), Outcome("c", "runs", False, "exit 1, ROLLBACK_COMPLETE")]
    # the runs column is reported beside the total, not in it (run.BESIDE_TOTAL)
    assert run.score_line("tosca", outcomes) == (
        "tosca    3/3  transform 3/3, runs 1/2 (not run: 1: Windows 1)")
