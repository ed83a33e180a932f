"""get_operation_output across hosts: an output made by a script on one instance, read by a script on another.

CloudFormation carries a value made at deploy time from one instance to another through a WaitCondition:
the producer sends it with `cfn-signal --id NAME --data VALUE` to the handle, and the WaitCondition's `Data`
attribute is the JSON object of the signals' ids and data (AWS CloudFormation User Guide, "Create wait
conditions in a CloudFormation template"). A script writes an output to `$OPERATION_OUTPUTS/NAME` or, as
Heat's software-config scripts (heat-translator's examples) do, to `${heat_outputs_path}.NAME`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.template import loads
from formwright.transform.cloudformation import transform_tosca

from .conftest import lint_errors, resources_of, write_template
from .harness import Host

EXCHANGE = """\
topology_template:
  node_templates:
    producer_host:
      type: tosca.nodes.Compute
      capabilities:
        os:
          properties: {type: linux, distribution: ubuntu, version: "22.04"}
    reader_host:
      type: tosca.nodes.Compute
      capabilities:
        os:
          properties: {type: linux, distribution: ubuntu, version: "22.04"}
    keys:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: producer_host
      interfaces:
        Standard:
          create: keys/generate.sh
    trust:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: reader_host
      interfaces:
        Standard:
          configure:
            implementation: trust/import.sh
            inputs:
              public_key: { get_operation_output: [keys, Standard, create, public_key] }
              line: { concat: ["fp=", { get_operation_output: [keys, Standard, create, fingerprint] }] }
"""
FILES = {
    # Heat's convention for one output, formwright's for the other; a value with quotes and backslashes
    "keys/generate.sh": "#!/bin/bash\nset -eu\n"
                        'echo "ssh-rsa AAAAB3Nza producer@host" > "${heat_outputs_path}.public_key"\n'
                        "printf '%s\\n' 'SHA256:a\"b\\c d' > \"$OPERATION_OUTPUTS/fingerprint\"\n",
    "trust/import.sh": "#!/bin/bash\nset -eu\n"
                       'echo "import cwd=$(pwd) key=$public_key $line" >> "$FW_LOG"\n',
}

needs_bash = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("python3") is None,
                                reason="needs bash and python3")


def _instances(template: dict) -> dict[str, dict]:
    return resources_of(template, "AWS::EC2::Instance")


def test_output_travels_through_a_wait_condition(tmp_path: Path):
    src = write_template(tmp_path / "src", EXCHANGE, files=FILES)
    result = transform_tosca(src, tmp_path / "out")
    template = result.template
    (wait_id, wait), = resources_of(template, "AWS::CloudFormation::WaitCondition").items()
    (handle_id,) = resources_of(template, "AWS::CloudFormation::WaitConditionHandle")
    assert wait["Properties"] == {"Handle": {"Ref": handle_id}, "Timeout": "1800", "Count": 2}
    producer, reader = _instances(template)["ProducerHost"], _instances(template)["ReaderHost"]
    init = producer["Metadata"]["AWS::CloudFormation::Init"]
    # the outputs are sent right after the operation that makes them
    sets = init["configSets"]["default"]
    assert sets[sets.index("KeysCreate") + 1] == "KeysCreateOutputs"
    publish = init["KeysCreateOutputs"]["commands"]["publish"]
    assert publish["env"] == {"FW_SIGNAL_URL": {"Ref": handle_id}}
    assert publish["command"].endswith("--publish keys create public_key fingerprint")
    # the reader refers to the WaitCondition's Data, so CloudFormation creates it only once both exist
    config = reader["Metadata"]["AWS::CloudFormation::Init"]["TrustConfigure"]
    (entry,) = config["files"].values()
    assert entry["content"] == {"Fn::GetAtt": [wait_id, "Data"]} and entry["mode"] == "000600"
    assert lint_errors(loads((tmp_path / "out" / "template.yaml").read_text())) == []


@needs_bash
def test_the_reader_script_sees_the_producer_output(tmp_path: Path):
    src = write_template(tmp_path / "src", EXCHANGE, files=FILES)
    out = tmp_path / "out"
    result = transform_tosca(src, out)
    host = Host(tmp_path, out, result.parameter_values, result.template)
    instances = _instances(result.template)
    # The instances run in the order CloudFormation creates them: the producer, then the reader
    # (its metadata refers to the WaitCondition, complete once the producer signalled).
    host.run(instances["ProducerHost"])
    signals = host.signals()
    assert [s[:4] for s in signals] == [["--success", "true", "--id", "public_key"],
                                        ["--success", "true", "--id", "fingerprint"]]
    host.run(instances["ReaderHost"])
    folder = host.root / "opt" / "formwright" / "trust" / "trust"
    assert host.log() == [f'import cwd={folder} key=ssh-rsa AAAAB3Nza producer@host fp=SHA256:a"b\\c d']


@needs_bash
def test_a_missing_output_fails_the_wait_condition_at_once(tmp_path: Path):
    files = {**FILES, "keys/generate.sh": "#!/bin/bash\necho 'forgot to write the key'\n"}
    src = write_template(tmp_path / "src", EXCHANGE, files=files)
    result = transform_tosca(src, tmp_path / "out")
    host = Host(tmp_path, tmp_path / "out", result.parameter_values, result.template)
    done = host.run(_instances(result.template)["ProducerHost"], check=False)
    assert done[-1] == "KeysCreate"  # the publishing config failed, so cfn-init stops (and signals failure)
    (failure,) = host.signals()
    assert failure[:4] == ["--success", "false", "--id", "public_key"]
    assert "keys.create wrote no output public_key" in failure


def test_a_reader_the_producer_waits_for_is_refused(transform):
    body = EXCHANGE.replace("""        - host: producer_host
      interfaces:""", """        - host: producer_host
        - dependency: trust
      interfaces:""")
    with pytest.raises(InputError, match="must wait for 'reader_host' first") as caught:
        transform(body, files=FILES)
    assert caught.value.line is not None


def test_an_output_of_an_operation_without_script_is_refused(transform):
    body = EXCHANGE.replace("[keys, Standard, create, public_key]", "[keys, Standard, configure, public_key]")
    body = body.replace("create: keys/generate.sh", "create: keys/generate.sh\n          configure: {}")
    with pytest.raises(InputError, match="operation 'configure' of node 'keys' has no script") as caught:
        transform(body, files=FILES)
    assert caught.value.line is not None


@pytest.mark.cloud
def test_deploys_through_a_tosca_stack(tmp_path: Path, run_cli, cloud):
    write_template(tmp_path / "ssh", EXCHANGE, files=FILES)
    # the local cloud can neither boot the instances nor receive their signals: stubbed, as a user would
    (tmp_path / "formwright.yaml").write_text(
        "name: keys\nregion: us-east-1\nstacks:\n  exchange:\n    tosca: ssh/service.yaml\n"
        "local_cloud:\n  stub: [AWS::EC2::Instance, AWS::CloudFormation::WaitCondition]\n")
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 0, result.err
    assert result.json()["stacks"]["exchange"]["outcome"] == "created"
    resources = cloud.client("cloudformation").describe_stack_resources(StackName="keys-exchange")
    kinds = {r["ResourceType"] for r in resources["StackResources"]}
    assert {"AWS::CloudFormation::WaitCondition", "AWS::CloudFormation::WaitConditionHandle"} <= kinds
