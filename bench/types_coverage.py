"""types coverage: how many of issue 30's resource types the local cloud runs, and how many templates of a
corpus it no longer refuses for a type, before (moto's CloudFormation models alone) and after (with the local
cloud's own models, `cloud/emulator/own.py`), side by side in one run.

A template counts as runnable when every resource type in it is one the local cloud can create (custom
resources, WaitConditions and CreationPolicy signals aside: those it refuses by design). This is the
"first blocker" count of issue 30, measured statically on the templates; the per-type lifecycle tests in
tests/localcloud/test_types_*.py show each model works.

    .venv/bin/python bench/types_coverage.py [--deploy] [TEMPLATE_DIR_OR_FILE ...]
    TYPES_COVERAGE_SRC=../main/src PYTHONPATH=../main/src .venv/bin/python bench/types_coverage.py --deploy

With --deploy each template is also deployed on a local cloud of the bench's own, as a newcomer would (its
local code paths packaged to stub objects and the S3 objects it names put first, its Transform expanded as
`formwright deploy` expands it, the defaults of its parameters and a plausible value for each parameter
without one, see bench/newcomer.py; a template with a parameter no plausible value is known for is skipped and
counted), and the outcome of each
and the first blockers by type are printed. Folders are walked whole (.json, .yaml, .yml, .template), e.g.
AWS's sample templates fetched into ~/.cache/formwright/samples/aws-cloudformation-templates.

Default corpus: the translated SAM applications in ../shared/conformance/sam/output (AWS's own SAM translator
test outputs, aws partition).
"""

from __future__ import annotations

import collections
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the tree measured: this one, or another's `src` (TYPES_COVERAGE_SRC, with PYTHONPATH set to it for the local
# cloud's own process) to deploy the corpus on the code before a change
SRC = os.environ.get("TYPES_COVERAGE_SRC", str(ROOT / "src"))
sys.path.insert(0, SRC)

# issue 30, item 3: the types that blocked the most public templates, in the order
TABLE = [
    "AWS::ApiGateway::Stage",
    "AWS::ApiGateway::Deployment",
    "AWS::ApiGateway::Authorizer",
    "AWS::ApiGateway::RestApi",
    "AWS::S3::BucketPolicy",
    "AWS::AutoScaling::AutoScalingGroup",
    "AWS::CloudFront::CachePolicy",
    "AWS::CloudFront::Distribution",
    "AWS::ApiGatewayV2::Api",
    "AWS::ApiGatewayV2::Stage",
    "AWS::ApiGatewayV2::Integration",
    "AWS::ApiGatewayV2::Route",
    "AWS::CloudWatch::Alarm",
    "AWS::KinesisFirehose::DeliveryStream",
    "AWS::EC2::EIPAssociation",
    "AWS::SecretsManager::Secret",
    "AWS::CodeBuild::Project",
    "AWS::AmazonMQ::Broker",
    "AWS::SQS::QueuePolicy",
    "AWS::Events::EventBusPolicy",
    "AWS::Lambda::Alias",
    "AWS::Lambda::Url",
    "AWS::AppSync::GraphQLApi",
    "AWS::CloudFormation::StackSet",
    "AWS::Cognito::UserPoolClient",
    "AWS::RDS::DBCluster",
    "AWS::Logs::QueryDefinition",
    "AWS::IoT::PolicyPrincipalAttachment",
]
# the properties naming an S3 object that holds an API definition (any other holds code or a layer)
DEFINITIONS = ("BodyS3Location", "DefinitionS3Location")
API = json.dumps(
    {
        "openapi": "3.0.1",
        "info": {"title": "api", "version": "1"},
        "paths": {
            "/": {
                "get": {"x-amazon-apigateway-integration": {"type": "mock", "httpMethod": "POST", "uri": ""}}
            }
        },
    }
).encode()
BY_DESIGN = ("Custom::", "AWS::CloudFormation::CustomResource", "AWS::CloudFormation::WaitCondition")


SUFFIXES = (".json", ".yaml", ".yml", ".template")


def templates(paths: list[Path]) -> list[tuple[str, dict]]:
    """(name, template) of every CloudFormation template in the files and folders given (folders walked
    whole: .json, .yaml, .yml, .template; YAML short forms read as CloudFormation reads them); a file that
    is not a template with Resources is left out, one that names Resources but does not load is in
    UNLOADABLE with the loader's reason."""
    from formwright.template import document

    found = []
    for path in paths:
        files = sorted(f for f in path.rglob("*") if f.suffix in SUFFIXES) if path.is_dir() else [path]
        for file in files:
            name = str(file.relative_to(path)) if path.is_dir() else file.name
            try:
                body = json.loads(file.read_text()) if file.suffix == ".json" else document.load(file)
            except Exception as err:  # noqa: BLE001 - not a template (a config file, an event sample, ...)
                if "Resources" in file.read_text(errors="replace"):
                    UNLOADABLE.append((name, str(err).replace(str(file), name)))
                continue
            if isinstance(body, dict) and isinstance(body.get("Resources"), dict):
                found.append((name, json.loads(json.dumps(body, default=str))))
    return found


# (name, reason) of the files naming Resources that formwright's template loader refuses
UNLOADABLE: list[tuple[str, str]] = []


def expanded(template: dict) -> dict:
    """The template as `formwright deploy` sends it: its Transform (SAM, AWS::LanguageExtensions) expanded
    locally."""
    from formwright.macros import MacroRegistry, expand, needs_auto_expand

    if not needs_auto_expand(template):
        return template
    return expand(template, registry=MacroRegistry.build())


def blocker(template: dict, runnable: set[str]) -> str | None:
    """The first resource type of the template the local cloud cannot create, or None."""
    for body in template["Resources"].values():
        if not isinstance(body, dict):  # an Fn::ForEach loop (AWS::LanguageExtensions): counted once expanded
            continue
        kind = str(body.get("Type"))
        if (
            not kind.startswith(BY_DESIGN)
            and kind != "AWS::CloudFormation::WaitConditionHandle"
            and kind not in runnable
        ):
            return kind
    return None


def _objects(template: dict) -> dict[tuple[str, str], bool]:
    """(bucket, key) of every S3 object the template's resources name -> whether it is an API definition
    (under BodyS3Location / DefinitionS3Location) rather than code or a layer."""
    found: dict[tuple[str, str], bool] = {}
    todo: list[tuple[str, object]] = [("", template["Resources"])]
    while todo:
        parent, item = todo.pop()
        if isinstance(item, dict):
            bucket = item.get("S3Bucket") or item.get("Bucket")
            key = item.get("S3Key") or item.get("Key")
            if isinstance(bucket, str) and isinstance(key, str):
                found[(bucket, key)] = parent in DEFINITIONS
            todo.extend(item.items())
        elif isinstance(item, list):
            todo.extend((parent, v) for v in item)
    return found


def deploy_all(found: list[tuple[str, dict]]) -> None:
    """Deploy each template as a newcomer would, on a local cloud of the bench's own (a private
    FORMWRIGHT_HOME, stopped at the end): its local paths packaged and the S3 objects it names put first, a
    value for every parameter without a default (bench/newcomer.py), every capability granted. Print how many
    reached CREATE_COMPLETE and why the others did not."""
    import io
    import os
    import tempfile
    import time
    import urllib.request
    import zipfile

    import boto3
    import newcomer

    from formwright.cloud import local

    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("index.py", "def handler(event, context):\n    return event\n")
    with tempfile.TemporaryDirectory() as home:
        os.environ["FORMWRIGHT_HOME"] = home
        cloud, _ = local.start()
        try:
            session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
            cfn = session.client("cloudformation", endpoint_url=cloud.endpoint)
            s3 = session.client("s3", endpoint_url=cloud.endpoint)
            ec2 = session.client("ec2", endpoint_url=cloud.endpoint)
            started = time.monotonic()
            outcomes: collections.Counter[str] = collections.Counter()
            blockers: collections.Counter[str] = collections.Counter()
            skipped = filled = 0
            for n, (name, template) in enumerate(found):
                try:
                    template = expanded(newcomer.packaged(template))
                except Exception as err:  # noqa: BLE001 - a macro formwright cannot expand is the outcome
                    outcome = f"expand: {str(err)[:100]}"
                    outcomes[outcome] += 1
                    blockers["(Transform)"] += 1
                    print(f"  {name}: {outcome}")
                    continue
                urllib.request.urlopen(
                    urllib.request.Request(f"{cloud.endpoint}/moto-api/reset", method="POST", data=b""),
                    timeout=10,
                ).read()
                params, unfilled = newcomer.filled(template, ec2)
                if unfilled:
                    skipped += 1
                    print(f"  {name}: skipped, {unfilled}")
                    continue
                filled += bool(params)
                for (bucket, key), is_definition in sorted(_objects(template).items()):
                    if bucket not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
                        s3.create_bucket(Bucket=bucket)
                    s3.put_object(Bucket=bucket, Key=key, Body=API if is_definition else code.getvalue())
                stack = f"t{n}"
                try:
                    made = cfn.create_change_set(
                        StackName=stack,
                        ChangeSetName="c",
                        ChangeSetType="CREATE",
                        TemplateBody=json.dumps(template),
                        Parameters=params,
                        Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"],
                    )
                    change_set = cfn.describe_change_set(ChangeSetName=made["Id"])
                    if change_set["Status"] == "FAILED":
                        outcome = "refused: " + change_set["StatusReason"][:110]
                        blockers[_named_type(change_set["StatusReason"], template)] += 1
                    else:
                        cfn.execute_change_set(ChangeSetName=made["Id"])
                        status = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"]
                        failed = [
                            e
                            for e in cfn.describe_stack_events(StackName=stack)["StackEvents"]
                            if e["ResourceStatus"] == "CREATE_FAILED"
                        ]
                        first = failed[-1] if failed else {}  # the events are newest first
                        reason = str(first.get("ResourceStatusReason", ""))[:90]
                        outcome = f"{first['ResourceType']}: {reason}" if failed else status
                        if failed:
                            blockers[first["ResourceType"]] += 1
                except cfn.exceptions.ClientError as err:
                    outcome = "refused: " + str(err)[:110]
                    blockers[_named_type(str(err), template)] += 1
                outcomes[outcome] += 1
                print(f"  {name}: {outcome}")
            tried = len(found) - skipped
            print(f"{len(found)} templates: {skipped} skipped (a parameter with no plausible value), "
                  f"{tried} tried ({filled} with parameters filled), {outcomes['CREATE_COMPLETE']} deployed "
                  f"to CREATE_COMPLETE in {time.monotonic() - started:.0f} s, load {os.getloadavg()[0]:.1f}")
            print("  first blockers by type:", ", ".join(f"{k} {v}" for k, v in blockers.most_common()))
            for _name, reason in UNLOADABLE:
                print(f"  not loaded (formwright's loader refuses it, not counted above): {reason[:160]}")
        finally:
            local.stop()


def _named_type(reason: str, template: dict) -> str:
    """The resource type a refusal names ("resource X (TYPE)", or a logical id of the template), else
    "(template)"."""
    import re

    named = re.search(r"\(((?:AWS|Custom|Alexa)::[A-Za-z0-9:]+)\)", reason)
    if named:
        return named.group(1)
    words = set(re.findall(r"[A-Za-z0-9]+", reason))
    for logical, body in (template.get("Resources") or {}).items():
        if logical in words and isinstance(body, dict):
            return str(body.get("Type"))
    return "(template)"


def main(argv: list[str]) -> int:
    from moto.cloudformation.parsing import get_model_map

    if str(ROOT / "src") != SRC:  # another tree: its local cloud deploys the corpus, nothing else is measured
        shared = next(p / "shared" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared").is_dir())
        deploy_all(
            templates(
                [Path(a) for a in argv if a != "--deploy"] or [shared / "conformance" / "sam" / "output"]
            )
        )
        return 0

    from formwright.cloud.emulator import resources

    before, after = set(get_model_map()), resources.implemented()
    own = set(resources.own.models())
    print(
        f"issue 30 table: {sum(t in after for t in TABLE)}/{len(TABLE)} types run by the local cloud "
        f"(before: {sum(t in before for t in TABLE)}, moto's models; the local cloud's own model now runs "
        f"{sum(t in own for t in TABLE)} of them)"
    )
    missing = [t for t in TABLE if t not in after]
    if missing:
        print("  not yet:", ", ".join(missing))
    shared = next((p / "shared" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared").is_dir()), ROOT)
    deploying = "--deploy" in argv
    argv = [a for a in argv if a != "--deploy"]
    corpus = [Path(a) for a in argv] or [shared / "conformance" / "sam" / "output"]
    found = templates(corpus)
    if not found:
        print("no templates found in", ", ".join(map(str, corpus)))
        return 1
    old = collections.Counter(blocker(t, before) for _, t in found)
    new = collections.Counter(blocker(t, after) for _, t in found)
    print(
        f"{len(found)} templates ({', '.join(map(str, corpus))}): "
        f"runnable before {old[None]}, after {new[None]}"
    )
    print("  first blockers before:", ", ".join(f"{k} {v}" for k, v in old.most_common() if k))
    print("  first blockers after: ", ", ".join(f"{k} {v}" for k, v in new.most_common() if k) or "none")
    if deploying:
        deploy_all(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
