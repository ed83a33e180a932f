"""TOSCA corpus, the `runs` column (opt-in: `run.py tosca --runs`): does the transformed artifact run?

Issue 26 (item 3): "The TOSCA conformance corpus gains a `runs` column for the cases whose operating system
and packages this image can serve; the others are listed with the reason."

- Which cases: each that transforms. Its template's instances are judged first with the local cloud's own
  rules (`formwright.cloud.instances.refusals`: the image its public image parameter names, the instance
  type, the `AWS::CloudFormation::Init` packages). A case with an instance the local image cannot serve, with
  something else the local cloud cannot run (`tosca_corpus.CANNOT_RUN` beyond instances and their signals), or
  with no instance at all (an RDS DBInstance of an engine the local cloud boots, MySQL/MariaDB, counts as one)
  is *not run*: listed with the reason, left out of the count.
- How: the case is deployed again, as a second project (`r<NN>-...`) to the same local cloud, with
  `local_cloud: {instances: boot}`: its instances boot from the cached Debian image and run their UserData,
  cfn-init and cfn-signal; the CreationPolicies and WaitConditions wait for the real signals.
- It ran when the stack is CREATE_COMPLETE (every signal came, and SUCCESS) with every output of the template,
  and each instance's cloud-init finished its UserData without "Failed to run module scripts-user" in its
  console output (GetConsoleOutput). The stack is deleted afterwards, which stops its instances.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from common import Outcome, exit_detail, formwright, last_line

RUNS_TIMEOUT = 900  # apt installs through the package proxy: a database and a web server take minutes
BOOTING = {"AWS::EC2::Instance", "AWS::AutoScaling::AutoScalingGroup"}
SIGNALS = {"AWS::EC2::Instance", "AWS::CloudFormation::WaitCondition"}  # what boot mode runs for real
CONSOLE_WAIT = 120.0


def not_run(case_id: str, label: str, detail: str) -> Outcome:
    """A case the runs column leaves out: `label` is the reason's kind (counted in the score line), `detail`
    the reason itself."""
    return Outcome(case_id, "runs", False, detail, extra={"not_run": label})


def _image_parameter(template: dict[str, Any], image: Any) -> str | None:
    """The public image parameter path an instance's ImageId refers to (`Ref` to a parameter whose default is
    an SSM path), or None."""
    if isinstance(image, dict) and set(image) == {"Ref"}:
        default = ((template.get("Parameters") or {}).get(image["Ref"]) or {}).get("Default")
        if isinstance(default, str) and default.startswith("/aws/service/"):
            return default
    return None


def _label(reason: str) -> str:
    """A short kind of refusal for the score line."""
    for pattern, label in ((r"Windows image", "Windows"), (r"is an \w+ image", "architecture"),
                           (r"yum packages", "yum-only packages"),
                           (r"(rpm|msi) packages", "rpm/msi packages"), (r"InstanceType", "instance type")):
        if re.search(pattern, reason):
            return label
    return "other"


def cannot_serve(template: dict[str, Any], cannot_run: dict[str, str]) -> tuple[str, str] | None:
    """(label, reason) when the local cloud cannot run this template's application, else None."""
    from formwright.cloud.instances.boot import unavailable
    from formwright.cloud.instances.databases import runs as engine_runs
    from formwright.cloud.instances.refusals import instance_type_refusal, packages_refusal, parameter_refusal

    resources = {k: v for k, v in (template.get("Resources") or {}).items() if isinstance(v, dict)}
    if not any(r.get("Type") in BOOTING or (r.get("Type") == "AWS::RDS::DBInstance" and engine_runs(
            (r.get("Properties") or {}).get("Engine"))) for r in resources.values()):
        return "no instance", "the template has no instance to boot (nor an RDS engine the local cloud boots)"
    others = sorted({str(r.get("Type")) for r in resources.values()
                     if r.get("Type") in cannot_run and r.get("Type") not in SIGNALS})
    if others:
        return "cannot run", f"the local cloud cannot run {', '.join(others)} ({cannot_run[others[0]]})"
    reason = unavailable()
    if reason:
        return "no booting here", reason
    for logical, resource in sorted(resources.items()):
        if resource.get("Type") != "AWS::EC2::Instance":
            continue
        props = resource.get("Properties") or {}
        parameter = _image_parameter(template, props.get("ImageId"))
        kind = props.get("InstanceType")
        refused = ((parameter_refusal(parameter) if parameter else None)
                   or (instance_type_refusal(kind) if isinstance(kind, str) else None)
                   or packages_refusal(resource.get("Metadata")))
        if refused:
            return _label(refused), f"{logical}: {refused}"
    return None


def _clients(env: dict[str, str]) -> tuple[Any, Any]:
    """CloudFormation and EC2 clients of the runner's local cloud."""
    import boto3

    record = json.loads((Path(env["FORMWRIGHT_HOME"]) / "local-cloud.json").read_text())
    made = [boto3.client(service, endpoint_url=record["endpoint"], region_name="us-east-1",
                         aws_access_key_id="testing", aws_secret_access_key="testing")  # noqa: S106
            for service in ("cloudformation", "ec2")]
    return made[0], made[1]


def _consoles(env: dict[str, str], stack_name: str) -> dict[str, str]:
    """Each instance of the stack's console output, once its cloud-init finished (or CONSOLE_WAIT passed)."""
    cfn, ec2 = _clients(env)
    resources = cfn.describe_stack_resources(StackName=stack_name)["StackResources"]
    ids = [r["PhysicalResourceId"] for r in resources if r["ResourceType"] == "AWS::EC2::Instance"]
    deadline = time.monotonic() + CONSOLE_WAIT
    consoles: dict[str, str] = {}
    for instance_id in ids:
        while True:
            consoles[instance_id] = ec2.get_console_output(InstanceId=instance_id).get("Output") or ""
            if "finished at" in consoles[instance_id] or time.monotonic() > deadline:
                break
            time.sleep(1)
    return consoles


def _said_by(env: dict[str, str], reason: str) -> str:
    """The end of the console output of the instance a failure reason names (its UniqueId), if any."""
    named = re.search(r"UniqueId (i-[0-9a-f]+)", reason)
    if not named:
        return ""
    text = _clients(env)[1].get_console_output(InstanceId=named.group(1)).get("Output") or ""
    return f"; its console: {_console_tail(text, 4)}" if text else ""


def _console_tail(text: str, lines: int = 2) -> str:
    found = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(found[-lines:])


def runs(case: dict[str, Any], index: int, template: dict[str, Any], work: Path, case_path: Path,
         cloud: tuple[dict[str, str], str], cannot_run: dict[str, str]) -> Outcome:
    """Deploy the case with booting instances and judge whether its application ran (module docstring)."""
    try:
        return _runs(case, index, template, work, case_path, cloud, cannot_run)
    except Exception as exc:  # noqa: BLE001 - the case's other columns keep their outcomes
        return Outcome(case["id"], "runs", False, f"runner error: {type(exc).__name__}: {exc}")


def _runs(case: dict[str, Any], index: int, template: dict[str, Any], work: Path, case_path: Path,
          cloud: tuple[dict[str, str], str], cannot_run: dict[str, str]) -> Outcome:
    served = cannot_serve(template, cannot_run)
    if served:
        return not_run(case["id"], *served)
    env, broken = cloud
    if broken:
        return Outcome(case["id"], "runs", False, broken)
    project = work / "runs"
    project.mkdir()
    name = f"r{index:02d}-" + re.sub(r"[^a-z0-9]+", "-", case["id"].lower()).strip("-")[:60]
    inputs = {str(k): str(v) for k, v in (case.get("inputs") or {}).items()}
    (project / "formwright.yaml").write_text("\n".join([
        f"name: {name}", "region: us-east-1", "stacks:", "  app:", f"    tosca: {json.dumps(str(case_path))}",
        f"    inputs: {json.dumps(inputs)}", "local_cloud: {instances: boot}", ""]), encoding="utf-8")
    try:
        proc = formwright(["deploy", str(project), "--yes", "--output", "json"], env=env,
                          timeout=RUNS_TIMEOUT)
        try:
            stack = json.loads(proc.stdout)["stacks"]["app"]
        except (ValueError, KeyError, TypeError):
            return Outcome(case["id"], "runs", False, exit_detail(proc))
        if proc.returncode != 0 or stack.get("status") != "CREATE_COMPLETE":
            why = str(stack.get("error") or last_line(proc.stderr))
            return Outcome(case["id"], "runs", False, f"exit {proc.returncode}, {stack.get('status')}: {why}"
                           + _said_by(env, why))
        missing = sorted(set(template.get("Outputs") or {}) - set(stack.get("outputs") or {}))
        if missing:
            return Outcome(case["id"], "runs", False, f"outputs missing: {', '.join(missing)}")
        for instance_id, console in _consoles(env, f"{name}-app").items():
            if "finished at" not in console:
                return Outcome(case["id"], "runs", False, f"{instance_id}: cloud-init did not finish within "
                               f"{CONSOLE_WAIT:.0f} s after CREATE_COMPLETE: {_console_tail(console)}")
            if "Failed to run module scripts-user" in console:
                return Outcome(case["id"], "runs", False, f"{instance_id}: its UserData failed: "
                               f"{_console_tail(console.split('Failed to run module')[0])}")
        return Outcome(case["id"], "runs", True)
    finally:
        formwright(["delete", str(project), "--yes"], env=env, timeout=300)  # its instances stop
