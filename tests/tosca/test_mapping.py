"""The CloudFormation plugin's mappings, one test each."""

from __future__ import annotations

import hashlib
import re

import pytest

from formwright.errors import InputError
from formwright.transform.cloudformation.sizes import instance_type

from .conftest import lint_errors, resources_of

SCRIPT = {"scripts/create.sh": "#!/bin/bash\n", "scripts/start.sh": "#!/bin/bash\n", "app/site.txt": "hi\n"}

WEB_ON_VM = """
topology_template:
  inputs:
    greeting:
      type: string
      default: hello
  node_templates:
    my-vm.1:
      type: tosca.nodes.Compute
      capabilities:
        host:
          properties:
            num_cpus: 4
            mem_size: 8 GB
            disk_size: 30 GB
    apache:
      type: tosca.nodes.WebServer.Apache
      requirements:
        - host: my-vm.1
    site:
      type: tosca.nodes.WebApplication
      artifacts:
        content: app/site.txt
      requirements:
        - host: apache
      interfaces:
        Standard:
          start:
            implementation: scripts/start.sh
            inputs:
              GREETING: { get_input: greeting }
              SELF_IP: { get_attribute: [ HOST, private_address ] }
          create: scripts/create.sh
  outputs:
    private:
      value: { get_attribute: [ my-vm.1, private_address ] }
    public:
      value: { get_attribute: [ my-vm.1, public_address ] }
"""

DB_TOPOLOGY = """
topology_template:
  node_templates:
    web_vm:
      type: tosca.nodes.Compute
    db_vm:
      type: tosca.nodes.Compute
    server:
      type: tosca.nodes.WebServer
      requirements:
        - host: web_vm
    app:
      type: tosca.nodes.WebApplication
      requirements:
        - host: server
        - database:
            node: db
            relationship: tosca.relationships.ConnectsTo
      interfaces:
        Standard:
          create:
            implementation: scripts/create.sh
            inputs:
              DB_HOST: { get_attribute: [ db_vm, private_address ] }
    dbms:
      type: tosca.nodes.DBMS.MySQL
      requirements:
        - host: db_vm
    db:
      type: tosca.nodes.Database.MySQL
      properties:
        name: appdb
        password: %s
      requirements:
        - host: dbms
  outputs:
    db_address:
      value: { get_attribute: [ db_vm, private_address ] }
"""


def _instance(result) -> tuple[str, dict]:
    ((name, instance),) = resources_of(result.template, "AWS::EC2::Instance").items()
    return name, instance


def test_compute_becomes_ec2_with_alphanumeric_name_and_ip_getatt(transform):
    result = transform(WEB_ON_VM, files=SCRIPT)
    name, _ = _instance(result)
    assert name == "MyVm1"
    outputs = result.template["Outputs"]
    assert outputs["Private"]["Value"] == {"Fn::GetAtt": ["MyVm1", "PrivateIp"]}
    assert outputs["Public"]["Value"] == {"Fn::GetAtt": ["MyVm1", "PublicIp"]}


def test_instance_type_image_and_disk(transform):
    _, instance = _instance(transform(WEB_ON_VM, files=SCRIPT))
    props = instance["Properties"]
    assert props["InstanceType"] == "t3.xlarge"
    assert props["ImageId"] == {"Ref": "ImageId"}
    assert props["BlockDeviceMappings"][0]["Ebs"]["VolumeSize"] == 30
    assert instance_type(None, None, None) == "t3.micro"
    assert instance_type(2, 3000, None) == "t3.medium"


def test_image_is_a_parameter_no_aws_call(transform):
    params = transform(WEB_ON_VM, files=SCRIPT).template["Parameters"]
    assert params["ImageId"]["Type"] == "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>"


def test_lifecycle_config_sets_in_order_with_files_from_s3(transform):
    _, instance = _instance(transform(WEB_ON_VM, files=SCRIPT))
    init = instance["Metadata"]["AWS::CloudFormation::Init"]
    assert init["configSets"]["default"] == ["FormwrightRuntime", "ApacheInstall", "SiteFiles", "SiteCreate",
                                             "SiteStart"]
    files = init["SiteFiles"]["files"]
    assert set(files) == {"/opt/formwright/site/app/site.txt", "/opt/formwright/site/scripts/create.sh",
                          "/opt/formwright/site/scripts/start.sh"}
    assert "Fn::Sub" in files["/opt/formwright/site/scripts/start.sh"]["source"]
    auth = instance["Metadata"]["AWS::CloudFormation::Authentication"]["ArtifactAccess"]
    assert auth["type"] == "S3"


def test_start_inputs_are_environment_variables(transform):
    _, instance = _instance(transform(WEB_ON_VM, files=SCRIPT))
    env = instance["Metadata"]["AWS::CloudFormation::Init"]["SiteStart"]["commands"]["run"]["env"]
    assert env["GREETING"] == {"Ref": "Greeting"}
    assert env["SELF_IP"] == "@@FW_PRIVATE_IP@@"  # its own address is filled in on the instance
    assert env["FW_INPUTS"] == "GREETING SELF_IP"


def test_creation_policy_and_signal(transform):
    _, instance = _instance(transform(WEB_ON_VM, files=SCRIPT))
    assert instance["CreationPolicy"]["ResourceSignal"]["Count"] == 1
    user_data = instance["Properties"]["UserData"]["Fn::Base64"]["Fn::Sub"]
    assert "cfn-init" in user_data and "cfn-signal" in user_data


def test_role_and_profile_grant_artifact_read(transform):
    result = transform(WEB_ON_VM, files=SCRIPT)
    _, instance = _instance(result)
    assert instance["Properties"]["IamInstanceProfile"] == {"Ref": "ArtifactReaderProfile"}
    role = result.template["Resources"]["ArtifactReaderRole"]["Properties"]
    assert role["Policies"][0]["PolicyDocument"]["Statement"][0]["Action"] == ["s3:GetObject"]
    assert result.capabilities == ["CAPABILITY_IAM"]
    assert "ArtifactBucket" in result.template["Parameters"]


def test_web_ports_open_to_world(transform):
    result = transform(WEB_ON_VM, files=SCRIPT)
    group = resources_of(result.template, "AWS::EC2::SecurityGroup")["MyVm1SecurityGroup"]
    rules = group["Properties"]["SecurityGroupIngress"]
    assert [(r["FromPort"], r["CidrIp"]) for r in rules] == [(80, "0.0.0.0/0")]


def test_inputs_parameters_and_outputs(transform):
    result = transform(WEB_ON_VM, files=SCRIPT)
    assert result.template["Parameters"]["Greeting"] == {"Type": "String", "Default": "hello"}
    assert set(result.template["Outputs"]) == {"Private", "Public"}


def test_mysql_becomes_rds_with_defaults_and_generated_password(transform):
    result = transform(DB_TOPOLOGY % "null", files=SCRIPT)
    ((_, db),) = resources_of(result.template, "AWS::RDS::DBInstance").items()
    props = db["Properties"]
    assert props["Engine"] == "mysql"
    assert props["MasterUsername"] == "root"
    assert props["Port"] == "3306"
    assert props["DBName"] == "appdb"
    param = props["MasterUserPassword"]["Ref"]
    assert result.template["Parameters"][param]["NoEcho"] is True
    assert "Default" not in result.template["Parameters"][param]
    assert result.generated_secrets == [param]


def test_literal_password_passed_as_noecho_value(transform):
    result = transform(DB_TOPOLOGY % "long-enough-pw", files=SCRIPT)
    ((_, db),) = resources_of(result.template, "AWS::RDS::DBInstance").items()
    param = db["Properties"]["MasterUserPassword"]["Ref"]
    assert result.parameter_values[param] == "long-enough-pw"
    assert "long-enough-pw" not in str(result.template)
    short = transform(DB_TOPOLOGY % "short", files=SCRIPT)
    assert short.generated_secrets  # too short for RDS: generated instead


def test_compute_hosting_only_mysql_has_no_instance_and_points_at_rds(transform):
    result = transform(DB_TOPOLOGY % "null", files=SCRIPT)
    assert list(resources_of(result.template, "AWS::EC2::Instance")) == ["WebVm"]
    assert result.template["Outputs"]["DbAddress"]["Value"] == {"Fn::GetAtt": ["DbmsDb", "Endpoint.Address"]}


def test_connects_to_mysql_points_app_at_rds_and_opens_port_only_to_app(transform):
    result = transform(DB_TOPOLOGY % "null", files=SCRIPT)
    _, instance = _instance(result)
    env = instance["Metadata"]["AWS::CloudFormation::Init"]["AppCreate"]["commands"]["run"]["env"]
    assert env["DB_HOST"] == {"Fn::GetAtt": ["DbmsDb", "Endpoint.Address"]}
    ((_, rule),) = resources_of(result.template, "AWS::EC2::SecurityGroupIngress").items()
    assert rule["Properties"]["FromPort"] == 3306
    assert rule["Properties"]["SourceSecurityGroupId"] == {"Fn::GetAtt": ["WebVmSecurityGroup", "GroupId"]}
    assert rule["Properties"]["GroupId"] == {"Fn::GetAtt": ["DbmsSecurityGroup", "GroupId"]}
    groups = resources_of(result.template, "AWS::EC2::SecurityGroup")
    assert "SecurityGroupIngress" not in groups["DbmsSecurityGroup"]["Properties"]


def test_an_attribute_read_through_a_requirement_is_its_targets(transform):
    # get_attribute [SELF, database, ip_address]: the requirement's target (the database, so its RDS
    # endpoint), as get_property reads a requirement's target's property; not the app's own host
    topology = (DB_TOPOLOGY % "null").replace(
        "DB_HOST: { get_attribute: [ db_vm, private_address ] }",
        "DB_HOST: { get_attribute: [ SELF, database, ip_address ] }")
    result = transform(topology, files=SCRIPT)
    _, instance = _instance(result)
    env = instance["Metadata"]["AWS::CloudFormation::Init"]["AppCreate"]["commands"]["run"]["env"]
    assert env["DB_HOST"] == {"Fn::GetAtt": ["DbmsDb", "Endpoint.Address"]}


def test_webapplication_port_80_default(transform):
    result = transform(DB_TOPOLOGY % "null", files=SCRIPT)
    rules = resources_of(result.template, "AWS::EC2::SecurityGroup")["WebVmSecurityGroup"]["Properties"]
    assert [r["FromPort"] for r in rules["SecurityGroupIngress"]] == [80]


def test_java_becomes_beanstalk_without_instance(transform):
    body = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
    jre:
      type: tosca.nodes.JavaRuntime
      requirements:
        - host: vm
    app:
      type: tosca.nodes.JavaApplication
      artifacts:
        jar: app.jar
      requirements:
        - host: jre
  outputs:
    url:
      value: { get_attribute: [ vm, public_address ] }
"""
    result = transform(body, files={"app.jar": "jar"})
    template = result.template
    assert not resources_of(template, "AWS::EC2::Instance")
    assert list(resources_of(template, "AWS::ElasticBeanstalk::Environment")) == ["AppEnvironment"]
    version = resources_of(template, "AWS::ElasticBeanstalk::ApplicationVersion")["AppVersion"]
    digest = hashlib.sha256(b"jar").hexdigest()[:16]  # content-addressed key
    assert version["Properties"]["SourceBundle"]["S3Key"] == f"{digest}/app.jar"
    assert template["Outputs"]["Url"]["Value"] == {
        "Fn::Sub": "${AWS::StackName}-app.${AWS::Region}.elasticbeanstalk.com"}


def test_hosted_on_and_depends_on_order_across_nodes(transform):
    body = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
    second:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: vm
        - dependency: first
      interfaces:
        Standard:
          create: scripts/create.sh
    first:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: vm
      interfaces:
        Standard:
          create: scripts/create.sh
          start: scripts/start.sh
"""
    _, instance = _instance(transform(body, files=SCRIPT))
    order = instance["Metadata"]["AWS::CloudFormation::Init"]["configSets"]["default"]
    assert order == [
        "FormwrightRuntime",
        "FirstFiles",
        "FirstCreate",
        "FirstStart",
        "SecondFiles",
        "SecondCreate",
    ]


def test_block_storage_attaches_ebs(transform):
    body = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
      requirements:
        - local_storage:
            node: disk
            relationship:
              type: tosca.relationships.AttachesTo
              properties:
                location: /dev/sdh
    disk:
      type: tosca.nodes.BlockStorage
      properties:
        size: 50 GB
"""
    template = transform(body).template
    ((_, volume),) = resources_of(template, "AWS::EC2::Volume").items()
    assert volume["Properties"]["Size"] == 50
    ((_, attachment),) = resources_of(template, "AWS::EC2::VolumeAttachment").items()
    assert attachment["Properties"]["Device"] == "/dev/sdh"
    assert lint_errors(template) == []


def test_every_mapping_lints_clean(transform):
    for body in (WEB_ON_VM, DB_TOPOLOGY % "null"):
        assert lint_errors(transform(body, files=SCRIPT).template) == []


TOKEN_AND_CONCAT = """
topology_template:
  node_templates:
    server:
      type: tosca.nodes.Compute
  outputs:
    subnet_part:
      value: { token: [ get_attribute: [ server, public_address ], '.', 1 ] }
    url:
      value: { concat: [ 'http://', get_attribute: [ server, public_address ], ':',
                         get_attribute: [ server, port ] ] }
"""


def test_token_of_a_deploy_time_value_is_select_of_split(transform):
    # TOSCA 1.0 section 4.3.2 token; tosca-parser's test_token.yaml takes the first part of public_address
    result = transform(TOKEN_AND_CONCAT)
    assert result.template["Outputs"]["SubnetPart"]["Value"] == {
        "Fn::Select": ["1", {"Fn::Split": [".", {"Fn::GetAtt": ["Server", "PublicIp"]}]}]}
    assert lint_errors(result.template) == []


def test_a_compute_port_is_an_undeclared_attribute_warned_not_refused(transform):
    # tosca-parser's test_concat.yaml: get_attribute [server, port] of a Compute, whose type declares
    # `ports` only; what TOSCAna tolerated (issue 13, item 3): a warning with a did-you-mean, an empty value
    result = transform(TOKEN_AND_CONCAT)
    assert result.template["Outputs"]["Url"]["Value"] == {
        "Fn::Join": ["", ["http://", {"Fn::GetAtt": ["Server", "PublicIp"]}, ":", ""]]}
    assert [str(w) for w in result.warnings if "'port'" in str(w)] == [
        f"{result.warnings[0].file}:12: get_attribute: node 'server' has no attribute 'port' in its type "
        "(did you mean 'ports'?)"]


def test_token_of_a_literal_and_its_bad_arguments(transform):
    literal = TOKEN_AND_CONCAT.replace("get_attribute: [ server, public_address ], '.', 1",
                                       "'10.0.1.7', '.', 3")
    assert transform(literal).template["Outputs"]["SubnetPart"]["Value"] == "7"
    for bad, message in (("'.', 4", "token index 4 is out of range"),
                         ("'..', 1", "token: the separator must be one character, got '..'"),
                         ("'.', -1", "token: the index must be a whole number from 0, got -1")):
        with pytest.raises(InputError, match=re.escape(message)):
            transform(literal.replace("'.', 3", bad))


TWO_DISKS = """
topology_template:
  inputs:
    storage_location:
      type: string
  node_templates:
    vm:
      type: tosca.nodes.Compute
      requirements:
        - local_storage:
            node: data
            relationship:
              type: tosca.relationships.AttachesTo
              properties:
                location: { get_input: storage_location }
        - local_storage:
            node: logs
            relationship:
              type: tosca.relationships.AttachesTo
              properties:
                location: /var/log/app
    data:
      type: tosca.nodes.BlockStorage
      properties:
        size: 1 GB
    logs:
      type: tosca.nodes.BlockStorage
      properties:
        size: 1 GB
"""


def _devices(template: dict) -> dict[str, object]:
    return {name: a["Properties"]["Device"]
            for name, a in resources_of(template, "AWS::EC2::VolumeAttachment").items()}


def test_attachment_devices_are_names_ec2_accepts(transform):
    # heat-translator's tosca_blockstorage_with_attachment gives `location: /dev/vdc` (an OpenStack virtio
    # name, which EC2's AttachVolume refuses); TOSCA 1.0 section 5.6.5 means `location` as a mount point
    result = transform(TWO_DISKS, inputs={"storage_location": "/dev/vdc"})
    assert _devices(result.template) == {"DataAttachment": "/dev/sdc", "LogsAttachment": "/dev/sdf"}
    warnings = [str(w).split(": ", 1)[1] for w in result.warnings]
    assert warnings == [
        "attachment of 'data' to 'vm': '/dev/vdc' is not a device name EC2 accepts for a volume; attached "
        "as /dev/sdc (give the AttachesTo relationship a `device` such as /dev/sdf)",
        "attachment of 'logs' to 'vm': '/var/log/app' is a mount point, not a device: the volume is not "
        "mounted there; attached as /dev/sdf (give the AttachesTo relationship a `device` such as /dev/sdf)"]
    assert lint_errors(result.template) == []


def test_an_ec2_device_from_an_input_stays_its_parameter_and_is_not_given_twice(transform):
    result = transform(TWO_DISKS.replace("/var/log/app", "/dev/sdf"), inputs={"storage_location": "/dev/sdf"})
    assert _devices(result.template) == {"DataAttachment": {"Ref": "StorageLocation"},
                                         "LogsAttachment": "/dev/sdg"}
    assert [str(w).split(": ", 1)[1] for w in result.warnings] == [
        "attachment of 'logs' to 'vm': '/dev/sdf' is taken by another volume of the instance; attached as "
        "/dev/sdg (give the AttachesTo relationship a `device` such as /dev/sdf)"]


OS_VM = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
      capabilities:
        os:
          properties: %s
"""


@pytest.mark.parametrize(("os", "name", "path"), [
    # AWS's public SSM parameters: EC2 user guide "Reference AMIs using Systems Manager parameters" and the
    # publishers' pages (Canonical, Debian); Windows' ami-windows-latest names
    ("{type: windows, version: '2019'}", "ImageIdWindows2019",
     "/aws/service/ami-windows-latest/Windows_Server-2019-English-Full-Base"),
    ("{type: linux, distribution: ubuntu, version: '24.04'}", "ImageIdUbuntu2404",
     "/aws/service/canonical/ubuntu/server/24.04/stable/current/amd64/hvm/ebs-gp3/ami-id"),
    ("{type: linux, distribution: debian, version: '11', architecture: aarch64}", "ImageIdDebian11Arm",
     "/aws/service/debian/release/11/latest/arm64"),
    ("{type: linux, distribution: amazon, version: '2'}", "ImageIdAmazonLinux2",
     "/aws/service/ami-amazon-linux-latest/amzn2-ami-hvm-x86_64-gp2"),
    ("{type: linux, distribution: rhel, version: '6.5'}", "ImageId",
     "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"),
])
def test_the_os_capability_picks_the_public_image_parameter(transform, os, name, path):
    result = transform(OS_VM % os)
    assert result.template["Parameters"][name]["Default"] == path
    (instance,) = resources_of(result.template, "AWS::EC2::Instance").values()
    assert instance["Properties"]["ImageId"] == {"Ref": name}
    user_data = instance["Properties"]["UserData"]["Fn::Base64"]["Fn::Sub"]
    assert user_data.startswith("<powershell>" if "windows" in os else "#!/bin/bash")
    notes = [str(w) for w in result.warnings]
    assert any("'rhel' has no public SSM image parameter" in n for n in notes) == ("rhel" in os)


JAVA = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
    jre:
      type: tosca.nodes.JavaRuntime
      properties:
        component_version: '%s'
      requirements:
        - host: vm
    app:
      type: tosca.nodes.JavaApplication
      artifacts:
        jar: app.jar
      requirements:
        - host: jre
"""


@pytest.mark.parametrize(("version", "corretto"), [("11", "11"), ("17.0.2", "17"), ("21", "21")])
def test_the_java_version_picks_the_beanstalk_platform(transform, version, corretto):
    result = transform(JAVA % version, files={"app.jar": "jar"})
    parameter = result.template["Parameters"][f"JavaSolutionStack{corretto}"]
    assert parameter["Default"].endswith(f"running Corretto {corretto}")
    assert not result.warnings


def test_a_java_version_without_a_platform_is_corretto_17_with_a_warning(transform):
    result = transform(JAVA % "1.6", files={"app.jar": "jar"})
    assert "JavaSolutionStack17" in result.template["Parameters"]
    assert [str(w).split(": ", 1)[1] for w in result.warnings] == [
        "Java 1.6 has no Elastic Beanstalk Corretto platform here: Corretto 17 is used "
        "(supported: 11, 17, 21)"]


POLICIES = """
topology_template:
  node_templates:
    server:
      type: tosca.nodes.Compute
  policies:
    - asg:
        type: tosca.policies.Scaling
        targets: [server]
        properties: {min_instances: 2, max_instances: 4, default_instances: 3}
  workflows:
    deploy:
      steps: {}
"""


def test_a_policy_or_workflow_not_applied_is_said(transform):
    # heat-translator's autoscaling sample scales a Compute to 3 instances; the CloudFormation plugin makes
    # one: a warning at the policy's line, not a silent success (an error with --strict)
    result = transform(POLICIES)
    assert [str(w).split(": ", 1)[1].split(":", 1)[0] for w in result.warnings] == [
        "policy 'asg' (tosca.policies.Scaling) is not applied",
        "workflow 'deploy' (workflow) is not applied"]
    assert [w.line for w in result.warnings] == [8, 13]
    assert len(resources_of(result.template, "AWS::EC2::Instance")) == 1


SHARED_DISK = """
topology_template:
  node_templates:
    web_1:
      type: tosca.nodes.Compute
      requirements:
        - local_storage: {node: shared, relationship: tosca.relationships.AttachesTo}
    web_2:
      type: tosca.nodes.Compute
      requirements:
        - local_storage: {node: shared, relationship: tosca.relationships.AttachesTo}
    shared:
      type: tosca.nodes.Storage.BlockStorage
      properties:
        size: 1 GB
"""


def test_one_volume_on_two_computes_is_an_io2_multi_attach_volume_in_their_zone(transform):
    # cloudnet-tosca-toolbox's OASIS 1.2 BlockStorage-4 (the spec's "single Block Storage shared by a 2-tier
    # application") under the 1.1+ name tosca.nodes.Storage.BlockStorage; EBS attaches a volume to several
    # instances only as io1/io2 with Multi-Attach (4 GiB at least), all in the volume's zone
    result = transform(SHARED_DISK)
    (volume,) = resources_of(result.template, "AWS::EC2::Volume").values()
    assert volume["Properties"] == {"Size": 4, "VolumeType": "io2", "Iops": 100, "MultiAttachEnabled": True,
                                    "AvailabilityZone": {"Fn::GetAtt": ["Web1", "AvailabilityZone"]}}
    instances = resources_of(result.template, "AWS::EC2::Instance")
    assert instances["Web2"]["Properties"]["AvailabilityZone"] == {"Fn::GetAtt": ["Web1", "AvailabilityZone"]}
    assert "AvailabilityZone" not in instances["Web1"]["Properties"]
    assert sorted(_devices(result.template).values()) == ["/dev/sdf", "/dev/sdf"]  # one device per instance
    assert ["EBS Multi-Attach" in str(w) for w in result.warnings] == [True]
    assert lint_errors(result.template) == []
