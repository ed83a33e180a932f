"""types coverage: how many of issue 30's resource types the local cloud runs, and how many templates of a
corpus it no longer refuses for a type, before (moto's CloudFormation models alone) and after (with the local
cloud's own models, `cloud/emulator/own.py`), side by side in one run.

A template counts as runnable when every resource type in it is one the local cloud can create (custom
resources, WaitConditions and CreationPolicy signals aside: those it refuses by design). This is the
"first blocker" count of issue 30, measured statically on the templates; the per-type lifecycle tests in
tests/localcloud/test_types_*.py show each model works.

    .venv/bin/python bench/types_coverage.py [TEMPLATE_DIR_OR_FILE ...]

Default corpus: the translated SAM applications in ../shared/conformance/sam/output (AWS's own SAM translator
test outputs, aws partition).
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

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
BY_DESIGN = ("Custom::", "AWS::CloudFormation::CustomResource", "AWS::CloudFormation::WaitCondition")


def templates(paths: list[Path]) -> list[tuple[str, dict]]:
    """(name, template) of every JSON template under the paths."""
    found = []
    for path in paths:
        files = sorted(path.glob("*.json")) if path.is_dir() else [path]
        for file in files:
            try:
                body = json.loads(file.read_text())
            except ValueError:
                continue
            if isinstance(body, dict) and isinstance(body.get("Resources"), dict):
                found.append((file.name, body))
    return found


def blocker(template: dict, runnable: set[str]) -> str | None:
    """The first resource type of the template the local cloud cannot create, or None."""
    for body in template["Resources"].values():
        kind = str((body or {}).get("Type"))
        if (
            not kind.startswith(BY_DESIGN)
            and kind != "AWS::CloudFormation::WaitConditionHandle"
            and kind not in runnable
        ):
            return kind
    return None


def main(argv: list[str]) -> int:
    from moto.cloudformation.parsing import get_model_map

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
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
