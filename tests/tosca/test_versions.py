"""TOSCA Simple Profile 1.0-1.3 grammar through tosca-parser's extension mechanism, errors and warnings.

The templates follow the patterns of the service templates TOSCAna shipped and tested its
CloudFormation plugin on (github.com/StuPro-TOSCAna/TOSCAna, server/src/test/resources/csars/yaml/valid:
`tosca_simple_yaml_1_1`, outputs with `type`, top-level `metadata`, a `database_endpoint` requirement
on a WebApplication, `get_attribute [my_app, app_endpoint, port]`); they are written here, not copied.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.tosca.diagnostics import ToscaErrors
from formwright.tosca.extension import VERSIONS
from formwright.transform.cloudformation import transform_tosca

BODY = """
metadata:
  template_name: versions
  template_version: 1.0
topology_template:
  inputs:
    password:
      type: string
  node_templates:
    server:
      type: tosca.nodes.Compute
      capabilities:
        os:
          properties: {type: linux, distribution: ubuntu, version: 22.04}
    apache:
      type: tosca.nodes.WebServer.Apache
      requirements:
        - host: server
    my_app:
      type: tosca.nodes.WebApplication
      requirements:
        - host: apache
  outputs:
    address:
      type: string
      description: the server's address
      value: { get_attribute: [ server, public_address ] }
    app_port:
      type: integer
      value: { get_attribute: [ my_app, app_endpoint, port ] }
"""


def _write(folder: Path, body: str, version: str = "tosca_simple_yaml_1_1", name: str = "service.yaml",
           files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"tosca_definitions_version: {version}\n" + textwrap.dedent(body), encoding="utf-8")
    for relative, text in (files or {}).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_with_typed_outputs_and_metadata(tmp_path: Path, version: str):
    result = transform_tosca(_write(tmp_path, BODY, version), None, inputs={"password": "long-enough-pw"})
    outputs = result.template["Outputs"]
    # The output's `type` (1.2+ grammar, used by TOSCAna in 1.1) is accepted; the endpoint port of a
    # WebApplication with no port is 80, the port TOSCAna's plugin opened for it.
    assert outputs["AppPort"]["Value"] == "80" or outputs["AppPort"]["Value"] == 80
    assert "Fn::GetAtt" in outputs["Address"]["Value"]


def test_extension_registered_through_the_entry_point():
    """tosca_simple_yaml_1_1 comes from the `toscaparser.extensions` entry point of formwright's package."""
    from toscaparser.extensions.exttools import ExtTools

    assert "tosca_simple_yaml_1_1" in ExtTools().get_versions()


def test_import_declaring_1_1(tmp_path: Path):
    types = """
    tosca_definitions_version: tosca_simple_yaml_1_1
    node_types:
      my.nodes.App:
        derived_from: tosca.nodes.SoftwareComponent
    """
    body = """
    imports:
      - types.yaml
    topology_template:
      node_templates:
        vm:
          type: Compute
        app:
          type: my.nodes.App
          requirements:
            - host: vm
    """
    src = _write(tmp_path, body, "tosca_simple_yaml_1_3", files={"types.yaml": textwrap.dedent(types)})
    assert transform_tosca(src, None).template["Resources"]


def test_invalid_version_names_its_line(tmp_path: Path):
    body = "topology_template:\n  node_templates:\n    vm:\n      type: tosca.nodes.Compute\n"
    src = _write(tmp_path, body, "tosca_xyz")
    with pytest.raises(InputError) as err:
        transform_tosca(src, None)
    assert str(err.value).startswith(f"{src}:1:") and "tosca_xyz" in str(err.value)


def test_all_errors_reported_together_each_with_its_line(tmp_path: Path):
    body = """
    topology_template:
      node_templates:
        vm:
          type: tosca.nodes.Compute
          capabilities:
            host:
              properties:
                num_cpus: many
        disk:
          type: tosca.nodes.BlockStorage
          properties:
            size: 10
    """
    src = _write(tmp_path, body, "tosca_simple_yaml_1_0")
    with pytest.raises(ToscaErrors) as err:
        transform_tosca(src, None)
    lines = str(err.value).splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"{src}:10:") and "many" in lines[0]
    assert lines[1].startswith(f"{src}:14:") and "scalar-unit" in lines[1]
    assert "Traceback" not in str(err.value)


UNKNOWN = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
    db_server:
      type: tosca.nodes.DBMS.MySQL
      properties:
        root_password: long-enough-pw
        prot: 3306
      requirements:
        - host: vm
    db:
      type: tosca.nodes.Database.MySQL
      properties:
        name: shop
      requirements:
        - host: db_server
    app:
      type: tosca.nodes.WebApplication
      requirements:
        - host: web
        - database_endpoint: db
      interfaces:
        Standard:
          configure:
            implementation: configure.sh
            inputs:
              when: { get_attribute: [ vm, boot_time ] }
    web:
      type: tosca.nodes.WebServer.Apache
      requirements:
        - host: vm
"""


def test_what_toscana_tolerated_is_a_warning_with_did_you_mean(tmp_path: Path):
    src = _write(tmp_path, UNKNOWN, files={"configure.sh": "#!/bin/sh\necho configured\n"})
    result = transform_tosca(src, None)
    shown = [str(w) for w in result.warnings]
    assert any(s.startswith(f"{src}:11:") and "'prot'" in s and "did you mean 'port'?" in s
               for s in shown), shown
    assert any(s.startswith(f"{src}:24:") and "database_endpoint" in s for s in shown), shown
    assert any(s.startswith(f"{src}:30:") and "boot_time" in s for s in shown), shown
    assert len(shown) == 3


def test_strict_makes_the_warnings_errors(tmp_path: Path):
    src = _write(tmp_path, UNKNOWN, files={"configure.sh": "#!/bin/sh\necho configured\n"})
    with pytest.raises(ToscaErrors) as err:
        transform_tosca(src, None, strict=True)
    text = str(err.value)
    assert "'prot'" in text and "database_endpoint" in text and "boot_time" in text


CAPABILITY_TYPOS = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
      capabilities:
        host:
          properties:
            num_cpu: 2
            mem_size: 2 GB
        os:
          properties:
            distro: ubuntu
            type: linux
    web:
      type: tosca.nodes.WebServer
      capabilities:
        data_endpoint:
          properties:
            port: 8080
            protocl: http
      requirements:
        - host: vm
"""


def test_unknown_capability_properties_are_warnings_with_did_you_mean(tmp_path: Path):
    # TOSCAna accepted unknown property names, capabilities' included (issue 13); tosca-parser words
    # them as unknown fields of the template's "properties", like a node property.
    src = _write(tmp_path, CAPABILITY_TYPOS)
    result = transform_tosca(src, None)
    shown = [str(w) for w in result.warnings]
    assert shown == [
        f"{src}:10: node template 'vm': capability 'host' has no property 'num_cpu' in its type (ignored) "
        "(did you mean 'num_cpus'?)",
        f"{src}:14: node template 'vm': capability 'os' has no property 'distro' in its type (ignored) "
        "(did you mean 'distribution'?)",
        f"{src}:22: node template 'web': capability 'data_endpoint' has no property 'protocl' in its type "
        "(ignored) (did you mean 'protocol'?)",
    ]
    # the known properties of the same capabilities still count: 2 GB of memory
    (instance,) = [r for r in result.template["Resources"].values() if r["Type"] == "AWS::EC2::Instance"]
    assert instance["Properties"]["InstanceType"] == "t3.small"


def test_strict_makes_unknown_capability_properties_errors(tmp_path: Path):
    src = _write(tmp_path, CAPABILITY_TYPOS)
    with pytest.raises(ToscaErrors) as err:
        transform_tosca(src, None, strict=True)
    lines = str(err.value).splitlines()
    assert len(lines) == 3 and lines[0].startswith(f"{src}:10:") and "'num_cpu'" in lines[0]


def test_cli_warns_and_strict_exits_2(tmp_path: Path, run_cli):
    src = _write(tmp_path / "src", CAPABILITY_TYPOS)
    tolerant = run_cli("transform", "tosca", str(src), "-o", str(tmp_path / "out"))
    assert tolerant.code == 0, tolerant.err
    assert f"warning: {src}:14:" in tolerant.err and "did you mean 'distribution'?" in tolerant.err
    strict = run_cli("transform", "tosca", str(src), "-o", str(tmp_path / "strict"), "--strict")
    assert strict.code == 2 and "Traceback" not in strict.err
    assert f"error: {src}:10:" in strict.err and "did you mean 'num_cpus'?" in strict.err
    assert not (tmp_path / "strict").exists()


def test_1_2_interface_inputs_and_storage_name(tmp_path: Path):
    body = """
    topology_template:
      node_templates:
        vm:
          type: tosca.nodes.Compute
          capabilities:
            host:
              properties: {name: web, num_cpus: 1}
          requirements:
            - local_storage: disk
        app:
          type: tosca.nodes.SoftwareComponent
          requirements:
            - host: vm
          interfaces:
            Standard:
              inputs:
                greeting: hello
              operations:
                create: create.sh
        disk:
          type: tosca.nodes.BlockStorage
          properties: {name: data, size: 1 GB}
      outputs:
        volume:
          value: { get_attribute: [ disk, volume_id ] }
    """
    script = {"create.sh": "#!/bin/sh\necho \"$greeting\"\n"}
    src = _write(tmp_path, body, "tosca_simple_yaml_1_2", files=script)
    result = transform_tosca(src, None)
    assert not result.warnings
    assert result.template["Outputs"]["Volume"]["Value"] == {"Ref": "DiskVolume"}


def test_open_host_requirement_and_empty_capability(tmp_path: Path):
    """The spec's dsl-definitions and inputs-and-outputs examples (1.3): a WebServer with no `host` (the
    orchestrator places it on the only Compute) and `os: {}`, which crashes tosca-parser as given."""
    body = """
    topology_template:
      node_templates:
        web:
          type: tosca:WebServer
        host:
          type: tosca:Compute
          capabilities:
            os: {}
    """
    src = _write(tmp_path, body, "tosca_simple_yaml_1_3")
    result = transform_tosca(src, None)
    assert [str(w) for w in result.warnings] == [
        f"{src}:5: node template 'web' names no host: placed on the only Compute 'host'"]
    with pytest.raises(ToscaErrors, match="names no host"):
        transform_tosca(src, None, strict=True)


VM = "topology_template:\n  node_templates:\n    vm:\n      type: tosca.nodes.Compute\n"


def test_the_version_is_checked_before_the_topology(tmp_path: Path):
    # OASIS tosca-community-contributions tests/tosca_simple_yaml_1_0: 3.1.2-tosca_definitions_version-04-
    # missing and -03-invalid; the version's error comes first, even where the topology is missing too
    missing = tmp_path / "missing.yaml"
    missing.write_text("description: no version, no topology\n")
    with pytest.raises(InputError) as err:
        transform_tosca(missing, None)
    assert str(err.value) == (f"{missing}:1: the service template has no tosca_definitions_version "
                              "(start it with `tosca_definitions_version: tosca_simple_yaml_1_3`)")
    invalid = _write(tmp_path, "description: a bad version\n", "not_tosca_simple_yaml_1_0", name="bad.yaml")
    with pytest.raises(InputError) as err:
        transform_tosca(invalid, None)
    assert str(err.value).startswith(f"{invalid}:1: tosca_definitions_version 'not_tosca_simple_yaml_1_0' is "
                                     "not a TOSCA version (one of: tosca_simple_yaml_1_0, ")


@pytest.mark.parametrize("minor", [0, 1, 2, 3])
def test_the_namespace_uri_is_a_version(tmp_path: Path, minor: int):
    # TOSCA's namespace URI as the version: OASIS 3.1.2-tosca_definitions_version-02-valid-definition-url
    src = _write(tmp_path, VM, f"http://docs.oasis-open.org/tosca/ns/simple/yaml/1.{minor}")
    assert "Vm" in transform_tosca(src, None).template["Resources"]


def test_a_version_below_the_top_is_a_warning(tmp_path: Path):
    # OASIS 3.1.2-tosca_definitions_version-05-not_first_line expects an error; tosca-parser accepts it
    src = tmp_path / "late.yaml"
    src.write_text("description: late\ntosca_definitions_version: tosca_simple_yaml_1_3\n" + VM)
    result = transform_tosca(src, None)
    assert [str(w) for w in result.warnings] == [
        f"{src}:2: tosca_definitions_version is not the first line of the service template "
        "(move it to the top)"]
    with pytest.raises(ToscaErrors, match="not the first line"):
        transform_tosca(src, None, strict=True)


def test_a_duplicate_key_is_the_last_one_with_a_warning(tmp_path: Path):
    # tosca-parser reads documents with PyYAML's SafeLoader, where the last of duplicate keys wins
    # (heat-translator's nfv/tacker_nfv_defs.yaml, imported by its autoscaling sample, repeats `type`)
    types = "tosca_definitions_version: tosca_simple_yaml_1_0\nnode_types:\n  my.App:\n" \
            "    derived_from: tosca.nodes.Root\n    derived_from: tosca.nodes.SoftwareComponent\n"
    body = "imports: [types.yaml]\n" + VM + "    app:\n      type: my.App\n      requirements:\n" \
           "        - host: vm\n"
    src = _write(tmp_path, body, "tosca_simple_yaml_1_0", files={"types.yaml": types})
    result = transform_tosca(src, None)
    assert [str(w) for w in result.warnings] == [
        f"{tmp_path / 'types.yaml'}:5: duplicate key 'derived_from' (first at line 4): the last one is used, "
        "as tosca-parser reads it (remove one of them)"]
    with pytest.raises(ToscaErrors, match="duplicate key 'derived_from'"):
        transform_tosca(src, None, strict=True)


PROPERTY_AS_ATTRIBUTE = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
    web:
      type: tosca.nodes.WebServer.Apache
      requirements:
        - host: vm
    app:
      type: tosca.nodes.WebApplication
      capabilities:
        app_endpoint:
          properties:
            port: { get_attribute: [ web, data_endpoint, port ] }
      requirements:
        - host: web
      interfaces:
        Standard:
          configure:
            implementation: configure.sh
            inputs:
              web_port: { get_attribute: [ web, data_endpoint, port ] }
"""


def test_a_capability_property_read_as_an_attribute_in_a_typed_property(tmp_path: Path):
    # the spec creates an attribute for every property, so get_attribute [web, data_endpoint, port] is
    # valid (the construct TOSCAna's templates use in outputs); tosca-parser refused it in a node or
    # capability property ('Attribute "port" was not found in capability "data_endpoint"')
    src = _write(tmp_path, PROPERTY_AS_ATTRIBUTE, files={"configure.sh": "#!/bin/sh\n"})
    result = transform_tosca(src, None)
    assert not result.warnings
    (instance,) = [r for r in result.template["Resources"].values() if r["Type"] == "AWS::EC2::Instance"]
    configure = instance["Metadata"]["AWS::CloudFormation::Init"]["AppConfigure"]
    assert configure["commands"]["run"]["env"]["web_port"] == "80"  # Apache's port, as TOSCAna opened it
