"""A role that cannot be assumed, and one that needs MFA: one line each, exit 2 (bad input).

moto's STS assumes any role (it does not evaluate trust policies), so the refusal that real STS gives
(AccessDenied for a role whose trust policy does not name the caller, or a wrong external id) cannot
happen on the local cloud. Here botocore's Stubber plays STS's documented AccessDenied reply.
"""

from __future__ import annotations

import io

import boto3
import pytest
from botocore.credentials import Credentials
from botocore.stub import Stubber

from formwright.cloud.session import Target, assume_role
from formwright.errors import EXIT_BAD_INPUT, InputError

ROLE = "arn:aws:iam::333333333333:role/deployer"


SOURCE = Credentials("t", "t")


def sts_client():
    return boto3.client("sts", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")


def test_role_that_cannot_be_assumed_is_bad_input() -> None:
    sts = sts_client()
    with Stubber(sts) as stub:
        stub.add_client_error(
            "assume_role", service_error_code="AccessDenied", http_status_code=403,
            service_message=f"User: arn:aws:iam::123456789012:user/dev is not authorized to perform: "
                            f"sts:AssumeRole on resource: {ROLE}",
            expected_params={"RoleArn": ROLE, "RoleSessionName": "ci", "ExternalId": "wrong-id"},
        )
        with pytest.raises(InputError) as err:
            assume_role(lambda **_: sts, SOURCE, ROLE, external_id="wrong-id", session_name="ci")
    text = str(err.value)
    assert err.value.exit_code == EXIT_BAD_INPUT and "\n" not in text
    assert text.startswith(f"cannot assume role {ROLE}: AccessDenied: User: ")
    assert "trust policy" in text


def test_mfa_role_without_a_terminal_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(InputError, match="needs an MFA code from arn:aws:iam::1:mfa/me"):
        assume_role(lambda **_: sts_client(), SOURCE, ROLE, mfa_serial="arn:aws:iam::1:mfa/me")


def test_mfa_code_is_asked_at_a_terminal(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Tty("123456\n"))
    sts = sts_client()
    creds = {"AccessKeyId": "AKIAEXAMPLEEXAMPLE", "SecretAccessKey": "s", "SessionToken": "t",
             "Expiration": "2030-01-01T00:00:00Z"}
    with Stubber(sts) as stub:
        stub.add_response("assume_role", {"Credentials": creds},
                          {"RoleArn": ROLE, "RoleSessionName": "formwright",
                           "SerialNumber": "arn:aws:iam::1:mfa/me", "TokenCode": "123456"})
        creds = assume_role(lambda **_: sts, SOURCE, ROLE, mfa_serial="arn:aws:iam::1:mfa/me")
        assert creds.get_frozen_credentials().token == "t"
    assert "MFA code for arn:aws:iam::1:mfa/me" in capsys.readouterr().err


def test_missing_profile_is_one_line(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    config.write_text("[profile other]\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    with pytest.raises(InputError, match=r"AWS profile 'nope' not found \(add it to ~/.aws/config"):
        Target("aws", "us-east-1", profile="nope").session()
