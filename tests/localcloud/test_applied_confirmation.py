"""formwright records a stack as applied only when the target confirmed the change (issue 9, item 7).

End to end through the CLI and the engine's runner: a proxy in front of the local cloud plays a
target that drops the tags of every CreateChangeSet (moto once did, and a tag-only change was then
recorded as applied). CloudFormation's DescribeStacks returns the stack's tags and parameters as
applied ("DescribeStacks", AWS CloudFormation API Reference), so the runner compares them with what
it sent. The proxy is a mock of a faulty target: real AWS does not drop tags, and cannot run here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

from tests.aws.fault_proxy import FaultProxy, Faults

TEMPLATE = {"Parameters": {"Size": {"Type": "String"}},
            "Resources": {"P": {"Type": "AWS::SSM::Parameter",
                                "Properties": {"Type": "String", "Value": {"Ref": "Size"}}}}}


class DropsTags(FaultProxy):
    """Forwards to the local cloud; while `dropping`, CreateChangeSet loses its Tags."""

    dropping = False

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes, dict]:
        """Answer one request, without the tags of a change set while dropping."""
        text = body.decode("utf-8", "replace")
        if self.dropping and "Action=CreateChangeSet" in text:
            kept = [(k, v) for k, v in urllib.parse.parse_qsl(text) if not k.startswith("Tags.")]
            body = urllib.parse.urlencode(kept).encode()
            headers = {k: v for k, v in headers.items() if k.lower() != "content-length"}
        return super().handle(method, path, headers, body)


def write(root: Path, size: str, team: str) -> None:
    (root / "stack.json").write_text(json.dumps(TEMPLATE))
    (root / "formwright.yaml").write_text(
        f"name: drop\nstacks:\n  app:\n    template: stack.json\n    parameters:\n      Size: '{size}'\n"
        f"    tags:\n      team: {team}\n")


def cli(proxy: FaultProxy, root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "FORMWRIGHT_TARGET": "aws", "AWS_ENDPOINT_URL": proxy.endpoint,
           "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"}
    env.pop("AWS_PROFILE", None)
    return subprocess.run([sys.executable, "-m", "formwright", *args, str(root), "--output", "json"], env=env,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_a_change_the_target_dropped_is_not_recorded_as_applied(cloud, tmp_path) -> None:
    with DropsTags(cloud.endpoint, Faults(stale_after_execute=False)) as proxy:
        write(tmp_path, "1", "blue")
        first = cli(proxy, tmp_path, "deploy", "-y")
        assert first.returncode == 0, first.stderr[-2000:]

        # an execution that the target reports UPDATE_COMPLETE, with the tag change dropped
        write(tmp_path, "2", "green")
        proxy.dropping = True
        dropped = cli(proxy, tmp_path, "deploy", "-y")
        assert dropped.returncode != 0
        assert "did not apply the change: tag team is 'blue', not 'green'" in dropped.stdout + dropped.stderr
        assert "not recorded as applied" in dropped.stdout + dropped.stderr
        stack = cloud.client("cloudformation").describe_stacks(StackName="drop-app")["Stacks"][0]
        assert stack["StackStatus"] == "UPDATE_COMPLETE"  # the target said it was done

        # so the next plan is not "unchanged": the change is still to be made
        proxy.dropping = False
        plan = cli(proxy, tmp_path, "plan")
        assert plan.returncode == 0, plan.stderr[-2000:]
        entry = json.loads(plan.stdout)["plans"]["app"]
        assert entry["kind"] == "update", entry
        assert [(t["key"], t["old"], t["new"]) for t in entry["tags"]] == [("team", "blue", "green")]

        # a target that applies it is recorded, and then the plan is unchanged
        again = cli(proxy, tmp_path, "deploy", "-y")
        assert again.returncode == 0, again.stderr[-2000:]
        assert json.loads(cli(proxy, tmp_path, "plan").stdout)["plans"]["app"]["kind"] == "unchanged"
