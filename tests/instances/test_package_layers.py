"""The packages cfn-init installs come from a cached layer of the image, built once per package set.

Like an AMI baked with the packages: the local cloud reads the instance's AWS::CloudFormation::Init (the
configs its UserData's cfn-init runs) before it boots, and boots it over a layer of the image with exactly
those packages installed (`instances/package_layers.py`, `instances/variants.py`). cfn-init still runs its
packages step inside and finds them installed (dpkg), as the real helper does on a baked AMI.

Which configs cfn-init runs ("cfn-init", AWS CloudFormation User Guide): the config sets of `--configsets`, or
`default`; with no configSets in the metadata, the config named `config`.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest

from formwright.cloud.instances import package_layers, variants
from tests.instances.conftest import image_or_skip
from tests.instances.test_signals import LINUX_AMI

USER_DATA = """#!/bin/sh
/opt/aws/bin/cfn-init -v --stack ${{AWS::StackName}} \\
    --resource {name} --configsets web --region ${{AWS::Region}}
/opt/aws/bin/cfn-signal -e $? --stack ${{AWS::StackName}} --resource {name} --region ${{AWS::Region}}
"""
INIT = {"configSets": {"web": ["base", {"ConfigSet": "tools"}], "tools": ["listing"], "unused": ["other"]},
        "base": {"packages": {"yum": {"httpd": []}, "apt": {"curl": ["7.88.1-10+deb12u5"]}}},
        "listing": {"packages": {"apt": {"tree": []}, "python": {"boto3": []}}},
        "other": {"packages": {"apt": {"nginx": []}}}}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_the_package_set_is_what_the_user_datas_cfn_init_will_install() -> None:
    metadata = {"AWS::CloudFormation::Init": INIT}
    script = USER_DATA.format(name="Web")
    # yum names as Debian's (httpd -> apache2), a pinned apt version kept, configs of other sets left out
    found = package_layers.wanted("Web", metadata, _b64(script))
    assert found == ("apache2", "curl=7.88.1-10+deb12u5", "tree")
    assert package_layers.wanted("Other", metadata, _b64(script)) == ()  # its cfn-init applies Web's metadata
    assert package_layers.wanted("Web", metadata, _b64("#!/bin/sh\necho no cfn-init\n")) == ()
    plain = {"AWS::CloudFormation::Init": {"config": {"packages": {"apt": {"jq": []}}}}}
    bare = "#!/bin/sh\ncfn-init -s S -r Web || exit 1\n"
    assert package_layers.wanted("Web", plain, _b64(bare)) == ("jq",)  # no configSets: the config `config`
    assert package_layers.wanted("Web", metadata, None) == ()


def _instance(name: str) -> dict:
    init = {"config": {"packages": {"apt": {"tree": []}}}}
    user_data = USER_DATA.format(name=name).replace(" --configsets web", "")
    return {"Type": "AWS::EC2::Instance", "Metadata": {"AWS::CloudFormation::Init": init},
            "CreationPolicy": {"ResourceSignal": {"Timeout": "PT10M"}},
            "Properties": {"ImageId": LINUX_AMI, "InstanceType": "t3.micro",
                           "UserData": {"Fn::Base64": {"Fn::Sub": user_data}}}}


def _deploy(folder: Path, run_cli, names: list[str]) -> None:
    template = {"Resources": {name: _instance(name) for name in names}}
    (folder / "web.json").write_text(json.dumps(template))
    (folder / "formwright.yaml").write_text("name: layers\nregion: us-east-1\nstacks:\n  web: {template: "
                                            "web.json}\nlocal_cloud: {instances: boot}\n")
    deployed = run_cli("deploy", str(folder), "-y")
    assert deployed.code == 0, deployed.err + deployed.out


@pytest.mark.slow
@pytest.mark.cloud
def test_two_boots_with_the_same_packages_build_their_layer_once(tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    layer = variants.layer_dir(package_layers.layer_name(("tree",)))
    shutil.rmtree(layer, ignore_errors=True)  # built by this test's first boot
    _deploy(tmp_path, run_cli, ["First"])
    stamp = (layer / variants.STAMP).stat()
    assert (layer / "usr/bin/tree").exists()
    _deploy(tmp_path, run_cli, ["First", "Second"])  # the update boots Second
    assert (layer / variants.STAMP).stat().st_ino == stamp.st_ino  # not built again
    assert (layer / variants.STAMP).stat().st_mtime_ns == stamp.st_mtime_ns

    reservations = cloud.client("ec2").describe_instances()["Reservations"]
    ids = [i["InstanceId"] for r in reservations for i in r["Instances"] if i["State"]["Name"] == "running"]
    assert len(ids) == 2
    for instance_id in ids:
        state = Path(os.environ["FORMWRIGHT_HOME"]) / "instances" / instance_id
        assert (state / "root/usr/bin/tree").exists()  # installed in both ...
        assert not (state / "upper/usr/bin/tree").exists()  # ... from the layer, not by apt in the instance
        log = (state / "root/var/log/cfn-init.log").read_text()
        assert "apt packages already installed: tree" in log, log  # cfn-init's packages step ran and checked
