"""Fn::ImportValue orders stacks only within one account and region, as CloudFormation's exports are kept.

An export is visible to Fn::ImportValue only in the account and region of the stack that exports it
("For each AWS account, Export names must be unique within a Region"; "You can use the intrinsic function
Fn::ImportValue to import only values that have been exported within the same Region" — the CloudFormation
reference, Fn::ImportValue). So an
import waits for a project stack exporting that name in its own account and region; a same-named export
elsewhere orders nothing and is named in a warning. Against the local cloud, which keeps accounts apart
by the assumed role's account and exports apart per account and region.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.cloud.session import Targets
from formwright.engine.group import StackGroup
from formwright.engine.stack import prepare_stacks
from formwright.model.project import load_project
from formwright.model.regions import fan_out

SHARED, DEV = "111111111111", "222222222222"
EXPORTER = """Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  Url:
    Value: !Ref Q
    Export: {Name: registry-url}
"""
IMPORTER = """Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  Upstream: {Value: !ImportValue registry-url}
"""
PROJECT = f"""name: imp
groups:
  shared:
    account: "{SHARED}"
    role_arn: arn:aws:iam::{SHARED}:role/deployer
    region: eu-west-1
    stacks:
      registry: {{template: exporter.yaml}}
      reader: {{template: importer.yaml}}
  app:
    account: "{DEV}"
    role_arn: arn:aws:iam::{DEV}:role/deployer
    regions: [us-east-1, eu-west-1]
    stacks:
      mirror: {{template: exporter.yaml}}
      consumer: {{template: importer.yaml}}
stacks:
  stray:
    template: importer.yaml
    account: "{SHARED}"
    role_arn: arn:aws:iam::{SHARED}:role/deployer
    region: us-east-1
"""


@pytest.fixture
def estate(tmp_path: Path) -> Path:
    (tmp_path / "exporter.yaml").write_text(EXPORTER)
    (tmp_path / "importer.yaml").write_text(IMPORTER)
    (tmp_path / "formwright.yaml").write_text(PROJECT)
    return tmp_path


def test_an_import_waits_only_for_an_exporter_in_its_own_account_and_region(estate: Path, cloud) -> None:
    project = load_project(estate)
    fan_out(project, "us-east-1")
    targets = Targets("local")
    group = StackGroup(project, prepare_stacks(project, targets=targets), targets.get(project.target),
                       targets=targets)
    assert group.imports == {
        "registry": set(), "reader": {"registry"}, "stray": set(),
        "mirror@us-east-1": set(), "mirror@eu-west-1": set(),
        "consumer@us-east-1": {"mirror@us-east-1"}, "consumer@eu-west-1": {"mirror@eu-west-1"},
    }
    [warning] = group.warnings
    assert warning.startswith(f"stack 'stray' ({SHARED}/us-east-1): Fn::ImportValue 'registry-url' is "
                              f"exported only by 'mirror@eu-west-1' ({DEV}/eu-west-1), 'mirror@us-east-1' "
                              f"({DEV}/us-east-1), 'registry' ({SHARED}/eu-west-1); exports are per account "
                              "and region"), warning


def test_deploy_orders_imports_per_account_and_region(estate: Path, run_cli, cloud) -> None:
    # no depends_on anywhere: the importers succeed only because they wait for their own place's exporter
    done = run_cli("deploy", str(estate), "shared", "app", "--yes", "--output", "json")
    assert done.code == 0, done.out + done.err
    assert set(done.json()["stacks"]) == {"registry", "reader", "mirror@us-east-1", "mirror@eu-west-1",
                                          "consumer@us-east-1", "consumer@eu-west-1"}
    # the whole project: the stray import is named before anything is written, and is refused as
    # CloudFormation refuses it (no such export in its account and region: a rejected change set, exit 2)
    stray = run_cli("deploy", str(estate), "--yes")
    assert stray.code == 2, stray.err
    warning = f"warning: stack 'stray' ({SHARED}/us-east-1): Fn::ImportValue 'registry-url' is exported only"
    assert stray.err.startswith(warning), stray.err
    assert "stray: CreateChangeSet rejected: No export named registry-url found." in stray.err
