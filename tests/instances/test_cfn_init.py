"""cfn-init with each section of AWS::CloudFormation::Init, and cfn-hup, inside a booted instance
(`local_cloud: {instances: boot}`), through the CLI and the real local cloud; checked from the host by reading
the instance's root and over HTTP.

Marked slow: it boots an instance from the cached image (tests/instances/test_boot.py builds it).

Where the behaviour comes from ("AWS::CloudFormation::Init", "cfn-init", "cfn-hup", AWS CloudFormation User
Guide):
- cfn-init reads the resource's Metadata with DescribeStackResource, intrinsic functions resolved (the
  Greeting parameter below); configSets may include another (`{"ConfigSet": name}`);
- a config's sections run in the order packages, groups, users, sources, files, commands, services;
- users are non-interactive system users (shell /sbin/nologin); files take mode (six octal digits), owner,
  group and a `context` for `{{mustache}}` templates (pystache: `{{x}}` is HTML-escaped, `{{{x}}}` is not);
- commands run in the alphabetical order of their names; `test` gates one; `env` replaces the environment;
  `ignoreErrors` lets a failing one pass;
- services are started (`ensureRunning`) after the other sections;
- cfn-hup runs a hook's action when the metadata at its path changed since it last looked.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.instances.conftest import get, image_or_skip, processes_in
from tests.instances.test_signals import LINUX_AMI, _network

pytestmark = [pytest.mark.slow, pytest.mark.cloud]

UNIT = """[Unit]
Description=the site
[Service]
User=webuser
WorkingDirectory=/srv/site
Environment=PORT=8081
ExecStart=/usr/bin/python3 -m http.server ${PORT} --bind 0.0.0.0
"""
SYSV = """#!/bin/sh
case "$1" in
  start) cd /srv/site/unpacked && nohup python3 -m http.server 8082 >/var/log/legacy.log 2>&1 &
         echo $! > /run/legacy.pid ;;
  stop) kill "$(cat /run/legacy.pid)" ;;
  restart) "$0" stop; "$0" start ;;
  status) kill -0 "$(cat /run/legacy.pid 2>/dev/null)" 2>/dev/null || exit 3 ;;
esac
"""
HUP = "[main]\nstack=${AWS::StackId}\nregion=${AWS::Region}\ninterval=1\n"
HOOK = ("[changed]\ntriggers=post.update\npath=Resources.Web.Metadata.AWS::CloudFormation::Init\n"
        "action=/opt/aws/bin/cfn-init -s ${AWS::StackName} -r Web -c all --region ${AWS::Region} "
        "&& touch /root/hup-ran\nrunas=root\n")


def _init(bucket: str, where: str) -> dict:
    setup = {
        "packages": {"apt": {"procps": []}, "yum": {"procps-ng": []}},
        "groups": {"webgroup": {"gid": "4501"}},
        "users": {"webuser": {"groups": ["webgroup"], "uid": "4501", "homeDir": "/srv/site"}},
        "sources": {"/srv/site/unpacked": f"https://{bucket}.s3.amazonaws.com/site.tar.gz"},
        "files": {
            "/srv/site/index.html": {"content": "<p>{{greeting}} from {{{where}}}</p>\n",
                                     "context": {"greeting": {"Ref": "Greeting"}, "where": where},
                                     "mode": "000640", "owner": "webuser", "group": "webgroup"},
            "/srv/site/copied.txt": {"source": f"https://s3.amazonaws.com/{bucket}/copied.txt",
                                     "authentication": "ByName"},
            "/srv/site/settings.json": {"content": {"stack": {"Ref": "AWS::StackName"}}},
            "/srv/site/encoded.txt": {"content": "ZW5jb2RlZAo=", "encoding": "base64"},
            "/srv/site/link": {"content": "/srv/site/copied.txt", "mode": "120000"},
            "/etc/systemd/system/site.service": {"content": UNIT},
            "/etc/init.d/legacy": {"content": SYSV, "mode": "000755"},
            "/etc/cfn/cfn-hup.conf": {"content": {"Fn::Sub": HUP}},
            "/etc/cfn/hooks.d/changed.conf": {"content": {"Fn::Sub": HOOK}},
        },
    }
    serve = {
        "commands": {
            "01_first": {"command": "echo one > order", "cwd": "/srv/site"},
            "02_env": {"command": ["/bin/sh", "-c", "echo $WHO >> /srv/site/order"], "env": {"WHO": "two"}},
            "03_gated": {"command": "echo ran > /srv/site/gated", "test": "test -e /nonexistent"},
            "04_fails": {"command": "exit 3", "ignoreErrors": "true"},
        },
        "services": {"systemd": {"site": {"enabled": "true", "ensureRunning": "true"}},
                     "sysvinit": {"legacy": {"ensureRunning": "true"}}},
    }
    return {"configSets": {"all": [{"ConfigSet": "base"}, "serve"], "base": ["setup"]},
            "setup": setup, "serve": serve}


USER_DATA = """#!/bin/sh
/opt/aws/bin/cfn-init -v --stack ${AWS::StackName} --resource Web --configsets all --region ${AWS::Region}
/opt/aws/bin/cfn-signal -e $? --stack ${AWS::StackName} --resource Web --region ${AWS::Region}
"""


def _template(subnet: str, address: str, bucket: str, where: str) -> dict:
    return {
        "Parameters": {"Greeting": {"Type": "String"}},
        "Resources": {
            "Net": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.213.0.0/16"}},
            "Sub": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Net"}, "CidrBlock": subnet}},
            "Web": {"Type": "AWS::EC2::Instance",
                    "Metadata": {"AWS::CloudFormation::Init": _init(bucket, where),
                                 "AWS::CloudFormation::Authentication": {  # S3 read with the role's keys
                                     "ByBucket": {"type": "S3", "buckets": [bucket], "roleName": "web"},
                                     "ByName": {"type": "S3", "roleName": "web"}}},
                    "CreationPolicy": {"ResourceSignal": {"Timeout": "PT10M"}},
                    "Properties": {"ImageId": LINUX_AMI, "InstanceType": "t3.micro",
                                   "SubnetId": {"Ref": "Sub"}, "PrivateIpAddress": address,
                                   "UserData": {"Fn::Base64": {"Fn::Sub": USER_DATA}}}},
        },
    }


def _archive() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        data = b"unpacked from the source\n"
        info = tarfile.TarInfo("index.html")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _project(root: Path, subnet: str, address: str, bucket: str, greeting: str, where: str) -> None:
    (root / "web.json").write_text(json.dumps(_template(subnet, address, bucket, where)))
    (root / "formwright.yaml").write_text(
        "name: init\nregion: us-east-1\nstacks:\n  web:\n    template: web.json\n"
        f"    parameters: {{Greeting: '{greeting}'}}\nlocal_cloud: {{instances: boot}}\n")


def test_cfn_init_applies_each_section_and_cfn_hup_runs_its_hook_after_an_update(
        tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    s3 = cloud.client("s3")
    bucket = "init-sources"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="site.tar.gz", Body=_archive())
    s3.put_object(Bucket=bucket, Key="copied.txt", Body=b"copied from S3\n")
    subnet, address = _network()
    _project(tmp_path, subnet, address, bucket, "Hello & welcome", "<cfn-init>")
    deployed = run_cli("deploy", str(tmp_path), "-y")
    assert deployed.code == 0, deployed.err + deployed.out
    ec2 = cloud.client("ec2")
    instance_id = ec2.describe_instances()["Reservations"][0]["Instances"][0]["InstanceId"]
    root = Path(os.environ["FORMWRIGHT_HOME"]) / "instances" / instance_id / "root"

    page = root / "srv/site/index.html"
    assert page.read_text() == "<p>Hello &amp; welcome from <cfn-init></p>\n"
    assert oct(page.stat().st_mode & 0o777) == "0o640"
    assert (page.stat().st_uid, page.stat().st_gid) == (4501, 4501)
    passwd = (root / "etc/passwd").read_text()
    assert re.search(r"^webuser:x:4501:\d+::/srv/site:/sbin/nologin$", passwd, re.M)
    assert "webgroup:x:4501:webuser" in (root / "etc/group").read_text()
    assert (root / "srv/site/unpacked/index.html").read_text() == "unpacked from the source\n"
    assert (root / "srv/site/copied.txt").read_text() == "copied from S3\n"
    assert json.loads((root / "srv/site/settings.json").read_text()) == {"stack": "init-web"}
    assert (root / "srv/site/encoded.txt").read_text() == "encoded\n"
    assert os.readlink(root / "srv/site/link") == "/srv/site/copied.txt"
    assert (root / "srv/site/order").read_text() == "one\ntwo\n"
    assert not (root / "srv/site/gated").exists()
    log = (root / "var/log/cfn-init.log").read_text()
    assert "Command 04_fails failed (errors ignored)" in log and "ConfigSets completed" in log
    assert log.index("Running config setup") < log.index("Running config serve")

    assert get(f"http://{address}:8081/index.html") == "<p>Hello &amp; welcome from <cfn-init></p>\n"
    assert get(f"http://{address}:8082/index.html") == "unpacked from the source\n"
    assert (root / "etc/systemd/system/multi-user.target.wants/site.service").is_symlink()

    # cfn-hup run in the instance's namespaces and root, looking once (its daemon looks every minute)
    inside = processes_in(root)[0]
    hup = ["nsenter", "-t", str(inside), "-n", "-m", "-p", "-u", "-r", "-w", "/opt/aws/bin/cfn-hup",
           "--no-daemon"]
    assert subprocess.run(hup, capture_output=True, check=False).returncode == 0
    assert not (root / "root/hup-ran").exists()  # the first look only records
    _project(tmp_path, subnet, address, bucket, "Hello again", "cfn-hup")
    updated = run_cli("deploy", str(tmp_path), "-y")
    assert updated.code == 0, updated.err + updated.out
    ran = subprocess.run(hup, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    assert (root / "root/hup-ran").exists(), (root / "var/log/cfn-hup.log").read_text()
    assert page.read_text() == "<p>Hello again from cfn-hup</p>\n"

    # a new PrivateIpAddress replaces the instance: the new one boots, runs cfn-init and signals as a new
    # instance does (its events UPDATE_IN_PROGRESS); the old one is gone after the clean-up
    prefix, last = address.rsplit(".", 1)
    moved = f"{prefix}.{int(last) + 1 if int(last) < 250 else int(last) - 1}"
    _project(tmp_path, subnet, moved, bucket, "Hello again", "cfn-hup")
    replaced = run_cli("deploy", str(tmp_path), "-y")
    assert replaced.code == 0, replaced.err + replaced.out
    assert get(f"http://{moved}:8081/index.html") == "<p>Hello again from cfn-hup</p>\n"
    assert not root.exists()
    instances = ec2.describe_instances(Filters=[{"Name": "instance-state-name", "Values": ["running"]}])
    new_id = instances["Reservations"][0]["Instances"][0]["InstanceId"]
    events = cloud.client("cloudformation").describe_stack_events(StackName="init-web")["StackEvents"]
    assert any(e["ResourceStatus"] == "UPDATE_IN_PROGRESS" and e.get("ResourceStatusReason")
               == f"Received SUCCESS signal with UniqueId {new_id}" for e in events)
    deleted = run_cli("delete", str(tmp_path), "-y")  # its instance stopped here, not by the next reset
    assert deleted.code == 0, deleted.err + deleted.out
