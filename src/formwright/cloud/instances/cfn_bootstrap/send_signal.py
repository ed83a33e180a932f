"""cfn-signal: tell CloudFormation that the instance is ready (or failed).

`cfn-signal -e CODE --stack S --resource R [--region R] [-i ID]` calls SignalResource (a CreationPolicy, or a
WaitCondition with one); `cfn-signal -e CODE [-r REASON] [-d DATA] [-i ID] URL` PUTs the signal document
`{"Status", "Reason", "UniqueId", "Data"}` to a WaitConditionHandle URL. `-s false` or a non-zero `-e` sends
FAILURE. The UniqueId defaults to the instance id, as the real helper's does (from the instance metadata).
"""

from __future__ import annotations

import argparse
import json
import sys

from . import cloud

INSTANCE_ID = "/var/lib/cloud/data/instance-id"


def instance_id() -> str:
    """This instance's id (cloud-init keeps it)."""
    try:
        with open(INSTANCE_ID) as handle:
            return handle.read().strip() or "unknown"
    except OSError:
        return "unknown"


def parser() -> argparse.ArgumentParser:
    """cfn-signal's options."""
    made = argparse.ArgumentParser(prog="cfn-signal", description="Signal CloudFormation (local cloud)")
    made.add_argument("url", nargs="?", help="a WaitConditionHandle URL")
    made.add_argument("-s", "--success", default="true", help="true or false (default true)")
    made.add_argument("-e", "--exit-code", type=int, default=None, help="non-zero sends FAILURE")
    made.add_argument("-r", "--reason", default=None)
    made.add_argument("-d", "--data", default=None)
    made.add_argument("-i", "--id", default=None, help="the signal's UniqueId (default: the instance id)")
    made.add_argument("--stack")
    made.add_argument("--resource")
    made.add_argument("--region")
    made.add_argument("--url", dest="endpoint", help="the CloudFormation endpoint")
    for ignored in ("--role", "--credential-file", "--access-key", "--secret-key", "--http-proxy",
                    "--https-proxy"):  # accepted as the real helper accepts them; the local cloud needs none
        made.add_argument(ignored, help=argparse.SUPPRESS)
    return made


def main(argv: list[str]) -> int:
    """Send one signal; 0 when it was accepted."""
    options = parser().parse_args(argv)
    success = str(options.success).lower() == "true" and not options.exit_code
    status = "SUCCESS" if success else "FAILURE"
    unique = options.id or instance_id()
    try:
        if options.stack and options.resource:
            cloud.call("SignalResource", {"StackName": options.stack, "LogicalResourceId": options.resource,
                                          "UniqueId": unique, "Status": status}, options.region,
                       options.endpoint, retries=0)
        elif options.url:
            reason = options.reason or ("Configuration Complete" if success else "Configuration failed")
            body = {"Status": status, "Reason": reason, "UniqueId": unique, "Data": options.data or reason}
            cloud.put(options.url, json.dumps(body).encode())
        else:
            print("cfn-signal: give a WaitConditionHandle URL, or --stack and --resource", file=sys.stderr)
            return 1
    except cloud.CloudError as err:
        print(err, file=sys.stderr)
        return 1
    return 0
