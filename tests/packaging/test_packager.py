"""Packaging without a cloud: what `aws cloudformation package` rewrites, reproducible zips, bad paths.

The places and their rewritten forms follow the command's reference page and the AWS CLI's own exporter
(awscli/customizations/cloudformation/artifact_exporter.py): Lambda `Code` becomes {S3Bucket, S3Key}, SAM
`CodeUri` an `s3://` URI, a nested `TemplateURL` the template's path-style HTTPS URL.
"""

from __future__ import annotations

import io
import os
import re
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formwright.errors import InputError
from formwright.packaging import package_template
from formwright.packaging.zips import FIXED_TIME, zip_folder
from formwright.template import load

BUCKET = "art-bucket"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def pack(root: Path, name: str = "template.yaml", **kwargs):
    file = root / name
    return package_template(load(file), file, root=root, bucket=BUCKET, region="us-east-1", prefix="p",
                            **kwargs)


def test_a_folder_zips_to_the_same_bytes_whatever_its_times_and_order(tmp_path: Path) -> None:
    write(tmp_path / "src" / "b.py", "B = 1\n")
    write(tmp_path / "src" / "a" / "c.py", "C = 1\n")
    (tmp_path / "src" / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "src" / "run.sh", 0o755)
    first = zip_folder(tmp_path / "src")
    os.utime(tmp_path / "src" / "b.py", (1_000_000, 1_000_000))
    write(tmp_path / "src" / "__pycache__" / "b.cpython-311.pyc", "junk")
    assert zip_folder(tmp_path / "src") == first
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        infos = archive.infolist()
        assert [i.filename for i in infos] == ["a/c.py", "b.py", "run.sh"]
        assert {i.date_time for i in infos} == {FIXED_TIME}
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in infos}
        assert modes == {"a/c.py": 0o644, "b.py": 0o644, "run.sh": 0o755}


@settings(max_examples=25, deadline=None)
@given(files=st.dictionaries(st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6})?\.txt", fullmatch=True),
                             st.binary(max_size=64), min_size=1, max_size=6))
def test_zips_are_reproducible_and_hold_every_file(tmp_path_factory: pytest.TempPathFactory,
                                                    files: dict[str, bytes]) -> None:
    first, second = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    for folder in (first, second):
        for name, data in (files.items() if folder is first else reversed(list(files.items()))):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
    data = zip_folder(first)
    assert data == zip_folder(second)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert {n: archive.read(n) for n in archive.namelist()} == files


def test_each_place_is_rewritten_as_the_aws_cli_rewrites_it(tmp_path: Path) -> None:
    write(tmp_path / "fn" / "app.py", "def handler(e, c):\n    return 1\n")
    write(tmp_path / "single.py", "X = 1\n")
    write(tmp_path / "api.yaml", "openapi: 3.0.0\n")
    write(tmp_path / "machine.json", "{}")
    write(tmp_path / "script.py", "print(1)\n")
    write(tmp_path / "template.yaml", """\
Transform: AWS::Serverless-2016-10-31
Resources:
  Sam:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: fn/, Handler: app.handler, Runtime: python3.12}
  Raw:
    Type: AWS::Lambda::Function
    Properties: {Code: ./single.py, Handler: single.h, Runtime: python3.12, Role: r}
  Inline:
    Type: AWS::Lambda::Function
    Properties: {Code: {ZipFile: "x"}, Handler: i.h, Runtime: python3.12, Role: r}
  Remote:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: s3://other/key.zip, Handler: a.h, Runtime: python3.12}
  Api:
    Type: AWS::Serverless::Api
    Properties: {StageName: p, DefinitionUri: api.yaml}
  Machine:
    Type: AWS::StepFunctions::StateMachine
    Properties: {RoleArn: r, DefinitionS3Location: machine.json}
  Job:
    Type: AWS::Glue::Job
    Properties: {Role: r, Command: {Name: glueetl, ScriptLocation: script.py}}
""")
    packaged = pack(tmp_path)
    resources = packaged.template["Resources"]
    keys = {a.source: a.key for a in packaged.artifacts}
    assert resources["Sam"]["Properties"]["CodeUri"] == f"s3://{BUCKET}/{keys['fn']}"
    assert keys["fn"].startswith("p/") and keys["fn"].endswith(".zip")
    assert resources["Raw"]["Properties"]["Code"] == {"S3Bucket": BUCKET, "S3Key": keys["single.py"]}
    assert keys["single.py"].endswith(".zip")  # Lambda code: a single file is zipped (FORCE_ZIP)
    assert resources["Inline"]["Properties"]["Code"] == {"ZipFile": "x"}
    assert resources["Remote"]["Properties"]["CodeUri"] == "s3://other/key.zip"
    assert resources["Api"]["Properties"]["DefinitionUri"] == f"s3://{BUCKET}/{keys['api.yaml']}"
    assert keys["api.yaml"].endswith(".yaml")  # a file as is
    assert resources["Machine"]["Properties"]["DefinitionS3Location"] == {"Bucket": BUCKET,
                                                                          "Key": keys["machine.json"]}
    assert resources["Job"]["Properties"]["Command"]["ScriptLocation"] == f"s3://{BUCKET}/{keys['script.py']}"
    by_key = {a.key: a for a in packaged.artifacts}
    assert by_key[keys["api.yaml"]].data == b"openapi: 3.0.0\n"


def test_the_same_content_has_the_same_key_and_is_kept_once(tmp_path: Path) -> None:
    write(tmp_path / "a" / "app.py", "X = 1\n")
    write(tmp_path / "b" / "app.py", "X = 1\n")
    write(tmp_path / "template.yaml", """\
Resources:
  A: {Type: AWS::Serverless::Function, Properties: {CodeUri: a, Handler: app.h, Runtime: python3.12}}
  B: {Type: AWS::Serverless::Function, Properties: {CodeUri: b, Handler: app.h, Runtime: python3.12}}
""")
    packaged = pack(tmp_path)
    assert len(packaged.artifacts) == 1
    again = pack(tmp_path)
    assert [a.key for a in again.artifacts] == [a.key for a in packaged.artifacts]


def test_a_function_without_code_uri_packages_its_template_folder(tmp_path: Path) -> None:
    # the AWS CLI's PACKAGE_NULL_PROPERTY: a function without CodeUri ships the template's folder
    write(tmp_path / "app.py", "X = 1\n")
    write(tmp_path / "template.yaml", """\
Resources:
  F: {Type: AWS::Serverless::Function, Properties: {Handler: app.h, Runtime: python3.12}}
  G: {Type: AWS::Serverless::Function, Properties: {InlineCode: "x", Handler: a.h, Runtime: python3.12}}
""")
    packaged = pack(tmp_path)
    assert packaged.template["Resources"]["F"]["Properties"]["CodeUri"].startswith(f"s3://{BUCKET}/p/")
    assert "CodeUri" not in packaged.template["Resources"]["G"]["Properties"]


def test_foreach_bodies_and_includes_are_packaged(tmp_path: Path) -> None:
    write(tmp_path / "fn" / "app.py", "X = 1\n")
    write(tmp_path / "snippet.yaml", "Q: {Type: AWS::SQS::Queue}\n")
    write(tmp_path / "template.yaml", """\
Transform: AWS::LanguageExtensions
Resources:
  Fn::ForEach::Fns:
    - Name
    - [A, B]
    - ${Name}Fn:
        Type: AWS::Serverless::Function
        Properties: {CodeUri: fn, Handler: app.h, Runtime: python3.12}
  Fn::Transform:
    Name: AWS::Include
    Parameters: {Location: snippet.yaml}
""")
    packaged = pack(tmp_path)
    body = packaged.template["Resources"]["Fn::ForEach::Fns"][2]["${Name}Fn"]
    assert body["Properties"]["CodeUri"].startswith(f"s3://{BUCKET}/p/")
    location = packaged.template["Resources"]["Fn::Transform"]["Parameters"]["Location"]
    assert location.startswith(f"s3://{BUCKET}/p/") and location.endswith(".yaml")
    kept = pack(tmp_path, include_locations=False)  # a local expansion reads the file itself
    assert kept.template["Resources"]["Fn::Transform"]["Parameters"]["Location"] == "snippet.yaml"


def test_a_missing_path_is_an_error_at_its_line(tmp_path: Path) -> None:
    write(tmp_path / "template.yaml", """\
Resources:
  F:
    Type: AWS::Lambda::Function
    Properties:
      Handler: a.h
      Code: ./nothere
""")
    with pytest.raises(InputError) as caught:
        pack(tmp_path)
    assert caught.value.location() == f"{tmp_path / 'template.yaml'}:6"
    assert "'./nothere' does not exist" in str(caught.value) and "F.Code" in str(caught.value)


def test_a_path_out_of_the_project_is_refused_symlinks_too(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(tmp_path / "secret" / "id_rsa", "KEY")
    write(project / "template.yaml", """\
Resources:
  F: {Type: AWS::Serverless::Function, Properties: {CodeUri: ../secret, Handler: a.h, Runtime: python3.12}}
""")
    with pytest.raises(InputError, match="outside the project") as caught:
        pack(project)
    assert caught.value.line == 2
    write(project / "template.yaml", """\
Resources:
  F: {Type: AWS::Serverless::Function, Properties: {CodeUri: code, Handler: a.h, Runtime: python3.12}}
""")
    (project / "code").mkdir()
    (project / "code" / "key").symlink_to(tmp_path / "secret" / "id_rsa")
    with pytest.raises(InputError, match="outside the project"):
        pack(project)


def test_nested_templates_are_packaged_recursively_and_a_cycle_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "fn" / "app.py", "X = 1\n")
    write(tmp_path / "template.yaml", """\
Resources:
  Network: {Type: AWS::CloudFormation::Stack, Properties: {TemplateURL: nested/net.yaml}}
""")
    write(tmp_path / "nested" / "net.yaml", """\
Resources:
  Leaf: {Type: AWS::CloudFormation::Stack, Properties: {TemplateURL: deeper/leaf.yaml}}
""")
    write(tmp_path / "nested" / "deeper" / "leaf.yaml", """\
Resources:
  F: {Type: AWS::Serverless::Function, Properties: {CodeUri: ../../fn, Handler: app.h, Runtime: python3.12}}
""")
    packaged = pack(tmp_path)
    url = packaged.template["Resources"]["Network"]["Properties"]["TemplateURL"]
    assert url.startswith(f"https://s3.us-east-1.amazonaws.com/{BUCKET}/p/") and url.endswith(".json")
    kinds = sorted(a.kind for a in packaged.artifacts)
    assert kinds == ["template", "template", "zip"]
    leaf = next(n for n in packaged.nested if n.file.name == "leaf.yaml")
    assert leaf.template["Resources"]["F"]["Properties"]["CodeUri"].startswith(f"s3://{BUCKET}/p/")
    write(tmp_path / "nested" / "deeper" / "leaf.yaml", """\
Resources:
  Back: {Type: AWS::CloudFormation::Stack, Properties: {TemplateURL: ../net.yaml}}
""")
    with pytest.raises(InputError, match=re.escape("cycle: template.yaml -> nested/net.yaml -> "
                                                   "nested/deeper/leaf.yaml -> nested/net.yaml")):
        pack(tmp_path)


def test_a_change_in_a_leaf_changes_every_url_above_it(tmp_path: Path) -> None:
    write(tmp_path / "template.yaml",
          "Resources:\n  N: {Type: AWS::CloudFormation::Stack, Properties: {TemplateURL: n.yaml}}\n")
    write(tmp_path / "n.yaml", "Resources:\n  L: {Type: AWS::CloudFormation::Stack, "
                               "Properties: {TemplateURL: l.yaml}}\n")
    write(tmp_path / "l.yaml", "Resources:\n  Q: {Type: AWS::SQS::Queue, Properties: {DelaySeconds: 1}}\n")
    before = pack(tmp_path).template["Resources"]["N"]["Properties"]["TemplateURL"]
    write(tmp_path / "l.yaml", "Resources:\n  Q: {Type: AWS::SQS::Queue, Properties: {DelaySeconds: 2}}\n")
    assert pack(tmp_path).template["Resources"]["N"]["Properties"]["TemplateURL"] != before


def test_dependencies_listed_but_not_vendored_are_said(tmp_path: Path) -> None:
    write(tmp_path / "py" / "app.py", "import requests\n")
    write(tmp_path / "py" / "requirements.txt", "# pinned\nrequests==2.32\n")
    write(tmp_path / "node" / "index.js", "require('left-pad')\n")
    write(tmp_path / "node" / "package.json", '{"dependencies": {"left-pad": "1.3.0"}}')
    write(tmp_path / "vendored" / "app.py", "import requests\n")
    write(tmp_path / "vendored" / "requirements.txt", "requests\n")
    (tmp_path / "vendored" / "requests-2.32.dist-info").mkdir()
    write(tmp_path / "template.yaml", """\
Resources:
  Py: {Type: AWS::Serverless::Function, Properties: {CodeUri: py, Handler: app.h, Runtime: python3.12}}
  Node: {Type: AWS::Serverless::Function, Properties: {CodeUri: node, Handler: index.h, Runtime: nodejs20.x}}
  Done:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: vendored, Handler: app.h, Runtime: python3.12}
""")
    packaged = pack(tmp_path)
    assert len(packaged.warnings) == 2
    py, node = packaged.warnings
    assert "py/requirements.txt lists dependencies" in py and "pip install -r requirements.txt -t py" in py
    assert "does not install dependencies" in py and py.startswith(f"{tmp_path / 'template.yaml'}:2:")
    assert "node/package.json" in node and "npm install" in node


def test_under_the_sandbox_a_path_must_stay_in_the_repository(tmp_path: Path) -> None:
    from formwright.sandbox import Sandbox, SandboxError, confined

    repo = tmp_path / "repo"
    write(tmp_path / "shared" / "app.py", "X = 1\n")
    write(repo / "template.yaml", """\
Resources:
  F: {Type: AWS::Serverless::Function, Properties: {CodeUri: ../shared, Handler: a.h, Runtime: python3.12}}
""")
    # the project (tmp_path) holds the folder, the synced repository does not: the sandbox refuses it
    with confined(Sandbox(repo)), pytest.raises(SandboxError, match="outside the checkout"):
        package_template(load(repo / "template.yaml"), repo / "template.yaml", root=tmp_path, bucket=BUCKET,
                         region="us-east-1")
