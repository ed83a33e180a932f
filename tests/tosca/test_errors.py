"""Bad input: one clear InputError each (with file:line where there is one), and nothing written to OUT."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.transform.cloudformation import transform_tosca

from .conftest import EXAMPLES_DIR, HEADER, write_template

GOOD = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
    app:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: vm
"""


def _fails(src: Path, out: Path, inputs: dict | None = None) -> str:
    with pytest.raises(InputError) as err:
        transform_tosca(src, out, inputs=inputs or {})
    assert not out.exists(), "nothing may be written on failure"
    text = str(err.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_malformed_yaml(tmp_path: Path):
    src = tmp_path / "bad.yaml"
    src.write_text(HEADER + "topology_template:\n  node_templates:\n    vm: [unclosed\n")
    assert _fails(src, tmp_path / "out").startswith(f"{src}:")


def test_unknown_type(tmp_path: Path):
    src = write_template(tmp_path, GOOD.replace("tosca.nodes.SoftwareComponent", "no.such.Type"))
    text = _fails(src, tmp_path / "out")
    assert text.startswith(f"{src}:8:") and "unknown type: 'no.such.Type'" in text


def test_unsupported_types_listed_with_locations(tmp_path: Path):
    body = GOOD + """    bucket:
      type: tosca.nodes.ObjectStorage
      properties:
        name: b
    lb:
      type: tosca.nodes.LoadBalancer
"""
    src = write_template(tmp_path, body)
    text = _fails(src, tmp_path / "out")
    assert "unsupported by the CloudFormation plugin" in text
    assert f"{src}:11: node 'bucket'" in text and f"{src}:15: node 'lb'" in text


def test_requirement_target_missing(tmp_path: Path):
    src = write_template(tmp_path, GOOD.replace("- host: vm", "- host: nowhere"))
    text = _fails(src, tmp_path / "out")
    assert text.startswith(f"{src}:10:") and "'nowhere', which does not exist" in text


def test_hosted_on_cycle(tmp_path: Path):
    body = """
topology_template:
  node_templates:
    a:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: b
    b:
      type: tosca.nodes.WebServer
      requirements:
        - host: a
"""
    text = _fails(write_template(tmp_path, body), tmp_path / "out")
    assert "HostedOn cycle" in text


def test_function_names_missing_node(tmp_path: Path):
    body = GOOD + """      properties:
        component_version: { get_attribute: [ ghost, private_address ] }
"""
    src = write_template(tmp_path, body)
    text = _fails(src, tmp_path / "out")
    assert "names node 'ghost', which does not exist" in text and text.startswith(f"{src}:")


def test_function_names_missing_property(tmp_path: Path):
    body = GOOD + """      interfaces:
        Standard:
          create:
            implementation: create.sh
            inputs:
              X: { get_property: [ vm, no_such_property ] }
"""
    src = write_template(tmp_path, body, files={"create.sh": "#!/bin/sh\n"})
    text = _fails(src, tmp_path / "out")
    assert "has no property 'no_such_property'" in text and text.startswith(f"{src}:16:")


def test_undeclared_input(tmp_path: Path):
    body = GOOD + """      properties:
        component_version: { get_input: nothing }
"""
    assert "input 'nothing', which is not declared" in _fails(
        write_template(tmp_path, body), tmp_path / "out"
    )


def test_import_by_url_refused(tmp_path: Path):
    src = write_template(tmp_path, "imports:\n  - https://example.com/types.yaml\n" + GOOD)
    assert "is a URL; imports must be local files" in _fails(src, tmp_path / "out")


def test_missing_artifact(tmp_path: Path):
    body = GOOD + """      interfaces:
        Standard:
          create: missing.sh
"""
    assert "'missing.sh' not found" in _fails(write_template(tmp_path, body), tmp_path / "out")


def _csar(path: Path, entries: dict[str, str], symlink: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in entries.items():
            archive.writestr(name, text)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return path


def test_csar_without_entry_definitions(tmp_path: Path):
    csar = _csar(
        tmp_path / "app.csar", {"Definitions/a.yaml": HEADER + GOOD, "Definitions/b.yaml": HEADER + GOOD}
    )
    assert "CSAR has no entry definitions" in _fails(csar, tmp_path / "out")


def test_csar_meta_without_entry(tmp_path: Path):
    csar = _csar(tmp_path / "app.csar", {"TOSCA-Metadata/TOSCA.meta": "TOSCA-Meta-File-Version: 1.0\n",
                                         "a.yaml": HEADER + GOOD})
    assert "TOSCA.meta has no Entry-Definitions" in _fails(csar, tmp_path / "out")


@pytest.mark.parametrize("name", ["../escape.yaml", "/abs/service.yaml", "a/../../escape.yaml"])
def test_csar_entries_escaping(tmp_path: Path, name: str):
    csar = _csar(tmp_path / "app.csar", {"service.yaml": HEADER + GOOD, name: "x"})
    text = _fails(csar, tmp_path / "out")
    assert "escapes the archive folder" in text or "absolute path" in text
    assert not (tmp_path.parent / "escape.yaml").exists()


def test_csar_symlink_refused(tmp_path: Path):
    csar = _csar(tmp_path / "app.csar", {"service.yaml": HEADER + GOOD}, symlink="link")
    assert "is a symbolic link" in _fails(csar, tmp_path / "out")


def test_existing_out_left_untouched_on_failure(tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("keep")
    src = write_template(tmp_path, GOOD.replace("- host: vm", "- host: nowhere"))
    with pytest.raises(InputError):
        transform_tosca(src, out)
    assert os.listdir(out) == ["keep.txt"]


def test_csar_example_transforms(tmp_path: Path):
    folder = EXAMPLES_DIR / "java"
    csar = tmp_path / "java.csar"
    with zipfile.ZipFile(csar, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    result = transform_tosca(csar, tmp_path / "out")
    key = result.template["Resources"]["GreeterVersion"]["Properties"]["SourceBundle"]["S3Key"]
    assert key.endswith("/greeter.jar")
    jar = (tmp_path / "out" / "files" / key)
    assert jar.read_bytes() == (folder / "artifacts" / "greeter.jar").read_bytes()
    assert "GreeterEnvironment" in result.template["Resources"]


def test_more_resources_than_cloudformation_takes(tmp_path: Path):
    body = "topology_template:\n  node_templates:\n" + "".join(
        f"    vm_{i}:\n      type: tosca.nodes.Compute\n" for i in range(251))  # instance + group each
    src = write_template(tmp_path, body)
    text = _fails(src, tmp_path / "out")
    line = 1 + 2 + 2 * 250 + 1  # header, topology_template/node_templates, two lines per earlier node
    assert text.startswith(
        f"{src}:{line}: the topology needs 502 CloudFormation resources, over the limit of 500 "
        "per template; the 501st comes from node 'vm_250'"
    )
    assert "split the topology" in text and "own stack" in text
    assert "ValueError" not in text and "Maximum number" not in text


def test_more_parameters_than_cloudformation_takes(tmp_path: Path):
    inputs = "".join(f"    in_{i}:\n      type: string\n      default: x\n" for i in range(201))
    src = write_template(tmp_path, "topology_template:\n  inputs:\n" + inputs + GOOD.split("\n", 2)[2])
    text = _fails(src, tmp_path / "out")
    # 201 inputs, the image and the optional key pair
    assert "needs 203 CloudFormation parameters, over the limit of 200 per template" in text
    assert "the 201st comes from input 'in_200'" in text


def test_a_scalar_without_unit_is_one_error_at_its_line_in_tosca_parsers_words(tmp_path: Path):
    # tosca-parser's test_scalar_unit_without_unit: '"10" is not a valid scalar-unit'. It also collects 'The
    # unit "0" is not valid' (it reads "10" as 1 and the unit 0), which names no element: not reported
    body = """
topology_template:
  node_templates:
    disk:
      type: tosca.nodes.BlockStorage
      properties:
        size: 10
"""
    src = write_template(tmp_path, body)
    text = _fails(src, tmp_path / "out")
    assert text == f'{src}:8: TOSCA validation failed: "10" is not a valid scalar-unit.'


def test_tosca_parsers_key_error_reads_as_its_message(tmp_path: Path):
    # tosca-parser's test_unknown_capability_property: a KeyError whose str() is quoted
    body = """
topology_template:
  node_templates:
    db:
      type: tosca.nodes.Database
      properties:
        name: shop
      interfaces:
        Standard:
          configure:
            implementation: configure.sh
            inputs:
              db_port: { get_property: [ SELF, database_endpoint, unknown ] }
"""
    src = write_template(tmp_path / "src", body, files={"configure.sh": "#!/bin/sh\n"})
    text = _fails(src, tmp_path / "out")
    assert text == (f'{src}:14: TOSCA validation failed: Property "unknown" was not found in capability '
                    '"database_endpoint" of node template "db" referenced from node template "db".')


HOSTED_TWICE = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
    other:
      type: tosca.nodes.Compute
    app:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - req1:
            node: vm
            relationship: tosca.relationships.HostedOn
        - host: vm
"""


def test_the_same_host_named_twice_is_one_host(tmp_path: Path):
    # tosca-parser's test_requirements.yaml names my_webserver as `host` and as a HostedOn `req1`
    result = transform_tosca(write_template(tmp_path, HOSTED_TWICE), None)
    resources = result.template["Resources"]
    assert sorted(k for k, v in resources.items() if v["Type"] == "AWS::EC2::Instance") == ["Other", "Vm"]


def test_two_hosts_are_refused_at_the_second(tmp_path: Path):
    src = write_template(tmp_path, HOSTED_TWICE.replace("- host: vm", "- host: other"))
    assert _fails(src, tmp_path / "out") == f"{src}:15: node 'app' is hosted on more than one node"


def test_a_function_error_is_at_the_node_that_writes_it(tmp_path: Path):
    # tosca-parser names the capability's node first and the referring one last ('... of node template "db"
    # referenced from node template "app"'): the error is where the function is written
    body = """
topology_template:
  node_templates:
    db:
      type: tosca.nodes.Database
      properties:
        name: shop
      requirements:
        - host: dbms
    dbms:
      type: tosca.nodes.DBMS
      properties:
        root_password: secret-password
      requirements:
        - host: vm
    vm:
      type: tosca.nodes.Compute
    app:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: vm
      interfaces:
        Standard:
          configure:
            implementation: configure.sh
            inputs:
              db_port: { get_property: [ db, database_endpoint, unknown ] }
"""
    src = write_template(tmp_path / "src", body, files={"configure.sh": "#!/bin/sh\n"})
    assert _fails(src, tmp_path / "out").startswith(f'{src}:28: TOSCA validation failed: Property "unknown"')


def test_an_input_named_like_formwrights_own_parameters_keeps_both(tmp_path: Path):
    # tosca-parser's test_normative_type_properties_override.yaml: an input `key_name` is parameter KeyName;
    # formwright's key pair parameter (and its condition) then take the next free name; the artifact
    # bucket's name, which the deploy scripts pass, is kept from inputs
    body = """
topology_template:
  inputs:
    key_name:
      type: string
      default: mykey
    artifact_bucket:
      type: string
      default: b
  node_templates:
    vm:
      type: tosca.nodes.Compute
"""
    src = write_template(tmp_path / "src", body)
    template = transform_tosca(src, tmp_path / "out", inputs={}).template
    parameters, conditions = template["Parameters"], template["Conditions"]
    assert parameters["KeyName"]["Default"] == "mykey" and parameters["ArtifactBucket2"]["Default"] == "b"
    assert parameters["KeyName2"]["Default"] == ""
    assert conditions["HasKeyName2"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "KeyName2"}, ""]}]}
    key = template["Resources"]["Vm"]["Properties"]["KeyName"]
    assert key == {"Fn::If": ["HasKeyName2", {"Ref": "KeyName2"}, {"Ref": "AWS::NoValue"}]}
