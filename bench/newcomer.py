"""What a newcomer does to a sample template before deploying it, for bench/types_coverage.py --deploy.

- **Package.** `sam deploy` / `formwright deploy` upload a local `CodeUri`, `DefinitionUri`, `Code`, ... and
  rewrite it to the uploaded object (the places `aws cloudformation package` reads, from
  `formwright.packaging.places`). A sample copied without its source folders has no code to upload, so each
  local path becomes an object of the bench's bucket that the bench fills with a stub handler (or a stub API
  definition): what is measured is the local cloud's handling of the template, not the sample's code.
- **Fill the parameters without a default** with what a newcomer would type or pick in the console: the
  account's default VPC, its subnets and security group, a key pair made for the purpose, the first allowed
  value, a value matching the allowed pattern. A parameter no plausible value is known for leaves the
  template skipped, with the reason.
"""

from __future__ import annotations

import re
from typing import Any

from formwright.packaging.places import BY_TYPE

BUCKET = "formwright-bench-artifacts"
KEY_PAIR = "bench-key"
LOCAL = re.compile(r"^(?!s3://|https?://)")
# strings tried in order against a String parameter's AllowedPattern / length bounds
CANDIDATES = (
    "sample", "samplevalue", "sample-value", "Sample1", "dev", "10.0.0.0/16", "10.0.0.10",
    "user@example.com", "arn:aws:iam::123456789012:role/sample", "123456789012", "Passw0rd1234",
)


def packaged(template: dict[str, Any]) -> dict[str, Any]:
    """`template` with every local artifact path rewritten to an object of BUCKET (the key names the
    resource), as packaging would rewrite it."""
    globals_ = template.get("Globals")
    function_globals = globals_.get("Function") if isinstance(globals_, dict) else None
    if isinstance(function_globals, dict) and _local(function_globals.get("CodeUri")):
        function_globals["CodeUri"] = f"s3://{BUCKET}/Globals/code.zip"
    global_code = isinstance(function_globals, dict) and "CodeUri" in function_globals
    for logical, body in (template.get("Resources") or {}).items():
        if not isinstance(body, dict) or not isinstance(body.get("Properties", {}), dict):
            continue
        props = body.setdefault("Properties", {})
        for place in BY_TYPE.get(str(body.get("Type")), ()):
            if place.form == "template" or len(place.path) != 1:
                continue
            name = place.path[0]
            value = props.get(name)
            absent = value is None and place.package_null and not global_code and not (
                {"InlineCode", "ImageUri"} & set(props) or props.get("PackageType") == "Image")
            if not (_local(value) or absent):
                continue
            key = f"{logical}/{name}{'.zip' if place.force_zip else '.json'}"
            props[name] = (f"s3://{BUCKET}/{key}" if place.form == "uri"
                           else {place.bucket_key: BUCKET, place.key_key: key})
    return template


def _local(value: object) -> bool:
    return isinstance(value, str) and bool(LOCAL.match(value))


def filled(template: dict[str, Any], ec2: Any) -> tuple[list[dict[str, str]], str]:
    """(CloudFormation Parameters for every parameter without a default, "") or ([], why one cannot be
    filled). `ec2` is a boto3 EC2 client of the local cloud (the default VPC's pieces are read from it);
    several parameters of one EC2 type get different values where the account has them (Subnet1, Subnet2:
    two subnets), as a newcomer picks them."""
    given: list[dict[str, str]] = []
    taken: dict[str, int] = {}
    for name, spec in (template.get("Parameters") or {}).items():
        if not isinstance(spec, dict) or "Default" in spec:
            continue
        kind = str(spec.get("Type", "String"))
        value = _value(name, spec, ec2, taken.get(kind, 0))
        taken[kind] = taken.get(kind, 0) + 1
        if value is None:
            return [], f"no plausible value for {name} ({spec.get('Type')})"
        given.append({"ParameterKey": name, "ParameterValue": value})
    return given, ""


def _value(name: str, spec: dict[str, Any], ec2: Any, nth: int) -> str | None:
    kind = str(spec.get("Type", "String"))
    allowed = spec.get("AllowedValues")
    if isinstance(allowed, list) and allowed:
        return str(allowed[0]).lower() if isinstance(allowed[0], bool) else str(allowed[0])
    if "AWS::EC2::" in kind:
        return _network(kind, ec2, nth)
    if kind in ("Number", "List<Number>"):
        return str(spec.get("MinValue", 1))
    if kind == "CommaDelimitedList":
        return "sample-a,sample-b"
    if kind != "String":
        return None
    pattern = spec.get("AllowedPattern")
    low, high = int(spec.get("MinLength", 0)), int(spec.get("MaxLength", 4096))
    if pattern and not _compiles(str(pattern)):  # Java-only syntax (`[\w-\+]`): no value can be checked
        return None
    if pattern and not low and re.fullmatch(str(pattern), ""):  # an optional value ("^$|..."): left empty
        return ""
    hints = (["user@example.com"] if "mail" in name.lower() else
             ["Passw0rd1234"] if "password" in name.lower() else [])
    for candidate in (*hints, *CANDIDATES, "s" * max(low, 1)):
        if low <= len(candidate) <= high and (not pattern or re.fullmatch(str(pattern), candidate)):
            return candidate
    return None


def _compiles(pattern: str) -> bool:
    """Whether Python's `re` reads an AllowedPattern (CloudFormation reads it as a Java regex, which takes
    some classes Python refuses, e.g. NeptuneDB's `[\\w-\\+]`)."""
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def _network(kind: str, ec2: Any, nth: int) -> str | None:
    """A value of an AWS-specific EC2 parameter type from the account's defaults (the `nth` of them where
    there are several), else None."""
    listed = kind.startswith("List<")
    base = kind[5:-1] if listed else kind
    if base == "AWS::EC2::KeyPair::KeyName":
        if not ec2.describe_key_pairs(Filters=[{"Name": "key-name", "Values": [KEY_PAIR]}])["KeyPairs"]:
            ec2.create_key_pair(KeyName=KEY_PAIR)
        return KEY_PAIR
    if base == "AWS::EC2::AvailabilityZone::Name":
        zones = [z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"]]
        return ",".join(zones[:2]) if listed else zones[nth % len(zones)]
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    if base == "AWS::EC2::VPC::Id":
        return vpc
    if base == "AWS::EC2::Subnet::Id":
        subnets = sorted(s["SubnetId"] for s in ec2.describe_subnets(
            Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"])
        return ",".join(subnets[:2]) if listed else subnets[nth % len(subnets)]
    if base == "AWS::EC2::SecurityGroup::Id":
        return ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [vpc]},
                                                     {"Name": "group-name", "Values": ["default"]}]
                                            )["SecurityGroups"][0]["GroupId"]
    if base == "AWS::EC2::Image::Id":
        return str(ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"])
    return None
