"""rain's directives, as rain's `pkg` documentation and code define them (cft/pkg/rain.go, module.go and the
module test templates in cft/pkg/tmpl/: a module's resources named `<resource><name>`, parameters from the
resource's Properties or their Default, Overrides merged with lists appended)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.packaging import package_template
from formwright.template import load

BUCKET = "b"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def pack(root: Path):
    file = root / "template.yaml"
    return package_template(load(file), file, root=root, bucket=BUCKET, region="eu-west-1", prefix="")


def test_embed_include_and_s3_directives(tmp_path: Path) -> None:
    write(tmp_path / "files" / "policy.json", '  {"Version": "2012-10-17"}\n')
    write(tmp_path / "files" / "tags.yaml", "- {Key: team, Value: !Rain::Embed team.txt}\n")
    write(tmp_path / "files" / "team.txt", "core\n")
    write(tmp_path / "site" / "index.html", "<p>hi</p>")
    write(tmp_path / "template.yaml", """\
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      Tags: !Rain::Include files/tags.yaml
  Param:
    Type: AWS::SSM::Parameter
    Properties:
      Type: String
      Value: !Rain::Embed files/policy.json
  Uri:
    Type: AWS::SSM::Parameter
    Properties: {Type: String, Value: !Rain::S3 site}
  Http:
    Type: AWS::SSM::Parameter
    Properties: {Type: String, Value: !Rain::S3Http site/index.html}
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Handler: a.h
      Role: r
      Code: !Rain::S3 {Path: site/index.html, Zip: true, BucketProperty: S3Bucket, KeyProperty: S3Key}
""")
    packaged = pack(tmp_path)
    res = packaged.template["Resources"]
    assert res["Param"]["Properties"]["Value"] == '{"Version": "2012-10-17"}'  # trimmed, as rain does
    assert res["Bucket"]["Properties"]["Tags"] == [{"Key": "team", "Value": "core"}]
    keys = {(a.source, a.kind): a.key for a in packaged.artifacts}
    assert res["Uri"]["Properties"]["Value"] == f"s3://{BUCKET}/{keys[('site', 'zip')]}"
    assert res["Http"]["Properties"]["Value"] == \
        f"https://{BUCKET}.s3.eu-west-1.amazonaws.com/{keys[('site/index.html', 'file')]}"
    # the one file zipped alone is the same archive as its folder (same entry, same bytes): one object
    assert res["Fn"]["Properties"]["Code"] == {"S3Bucket": BUCKET, "S3Key": keys[("site", "zip")]}


def test_a_local_module_is_inlined_as_rain_does(tmp_path: Path) -> None:
    write(tmp_path / "modules" / "bucket.yaml", """\
Parameters:
  LogBucketName: {Type: String}
  RetentionPolicy: {Type: String, Default: Retain}
Conditions:
  Always: !Equals [a, a]
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    DeletionPolicy: !Ref RetentionPolicy
    Properties:
      LoggingConfiguration:
        DestinationBucketName: !Ref LogBucket
      Tags: [{Key: a, Value: "1"}]
  LogBucket:
    Type: AWS::S3::Bucket
    Condition: Always
    Properties:
      BucketName: !Ref LogBucketName
  Topic:
    Type: AWS::SNS::Topic
    Properties:
      TopicName: !Sub "${LogBucketName}-${Bucket}-${Bucket.Arn}-${AWS::Region}"
Outputs:
  Arn:
    Value: !GetAtt Bucket.Arn
""")
    write(tmp_path / "template.yaml", """\
Resources:
  Site:
    Type: !Rain::Module modules/bucket.yaml
    DependsOn: Other
    Properties:
      LogBucketName: logs
    Overrides:
      Bucket:
        Properties:
          Tags: [{Key: b, Value: "2"}]
  Other:
    Type: AWS::SQS::Queue
""")
    res = pack(tmp_path).template["Resources"]
    assert list(res) == ["SiteBucket", "SiteLogBucket", "SiteTopic", "Other"]
    bucket = res["SiteBucket"]
    assert bucket["DeletionPolicy"] == "Retain"  # the parameter's Default
    assert bucket["Properties"]["LoggingConfiguration"]["DestinationBucketName"] == {"Ref": "SiteLogBucket"}
    assert bucket["Properties"]["Tags"] == [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]
    assert bucket["DependsOn"] == "Other"
    assert res["SiteLogBucket"]["Properties"]["BucketName"] == "logs"
    assert res["SiteLogBucket"]["Condition"] == "Always"
    assert res["SiteTopic"]["Properties"]["TopicName"] == {
        "Fn::Sub": "logs-${SiteBucket}-${SiteBucket.Arn}-${AWS::Region}"}


def test_bad_directives_are_errors_at_their_line(tmp_path: Path) -> None:
    write(tmp_path / "template.yaml", "Resources:\n  P:\n    Type: AWS::SSM::Parameter\n"
                                      "    Properties: {Type: String, Value: !Rain::Embed missing.txt}\n")
    with pytest.raises(InputError, match="does not exist") as caught:
        pack(tmp_path)
    assert caught.value.line == 4
    write(tmp_path / "m.yaml", "Parameters: {Name: {Type: String}}\nResources:\n  Q: {Type: AWS::SQS::Queue, "
                               "Properties: {QueueName: !Ref Name}}\n")
    write(tmp_path / "template.yaml", "Resources:\n  M:\n    Type: !Rain::Module m.yaml\n")
    with pytest.raises(InputError, match="module parameter 'Name' has no value"):
        pack(tmp_path)
    write(tmp_path / "template.yaml", "Resources:\n  M:\n    Type: !Rain::Module m.yaml\n"
                                      "    Properties: {Name: n}\n    Overrides: {Nope: {}}\n")
    with pytest.raises(InputError, match="Overrides name Nope"):
        pack(tmp_path)
