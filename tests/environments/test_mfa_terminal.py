"""A role with `mfa_serial` asks for the code at a terminal, as the AWS CLI does, and sends it to STS.

A real child process on a pseudo-terminal (the prompt is only made when stdin is one) deploys through STS's
recording proxy (conftest.py) to the local cloud, which keeps accounts apart by the assumed role's account.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import boto3

DEV = "222222222222"
MFA = "arn:aws:iam::123456789012:mfa/ops"


def read_until(fd: int, marker: bytes, limit: float = 120) -> bytes:
    """What the terminal shows until `marker` (or the limit: the caller's assertion then says what came)."""
    seen = b""
    deadline = time.monotonic() + limit
    while marker not in seen and time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    return seen


def test_the_mfa_code_typed_at_the_terminal_reaches_sts(tmp_path: Path, cloud, sts_proxy) -> None:
    (tmp_path / "queue.yaml").write_text("Resources:\n  Q: {Type: AWS::SQS::Queue}\n")
    (tmp_path / "formwright.yaml").write_text(f"""name: mfa
account: "{DEV}"
role_arn: arn:aws:iam::{DEV}:role/deployer
mfa_serial: {MFA}
stacks:
  q: {{template: queue.yaml}}
""")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t",
           "AWS_ENDPOINT_URL": cloud.endpoint, "AWS_ENDPOINT_URL_STS": sts_proxy.endpoint}
    main, child = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "formwright", "deploy", str(tmp_path), "--yes",
                             "--target", "aws"], stdin=child, stdout=child, stderr=child, env=env)
    os.close(child)
    try:
        asked = f"MFA code for {MFA}: ".encode()
        prompt = read_until(main, asked)
        assert asked in prompt, prompt
        os.write(main, b"123456\n")
        rest = read_until(main, b"\x00")  # everything until the terminal closes
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    assert code == 0, rest.decode(errors="replace")
    [assume] = [call for call in sts_proxy.calls if call.get("Action") == "AssumeRole"]
    assert (assume["RoleArn"], assume["SerialNumber"], assume["TokenCode"]) == (
        f"arn:aws:iam::{DEV}:role/deployer", MFA, "123456")
    creds = boto3.client("sts", region_name="us-east-1", endpoint_url=cloud.endpoint, aws_access_key_id="t",
                         aws_secret_access_key="t").assume_role(
        RoleArn=f"arn:aws:iam::{DEV}:role/test", RoleSessionName="test")["Credentials"]
    cfn = boto3.client("cloudformation", region_name="us-east-1", endpoint_url=cloud.endpoint,
                       aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
                       aws_session_token=creds["SessionToken"])
    assert [s["StackName"] for s in cfn.describe_stacks()["Stacks"]] == ["mfa-q"]
