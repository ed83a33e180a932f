"""Sceptre projects written for these tests (our own, nothing copied from sceptre's repository): nested stack
group folders whose config.yaml files are merged from the root down, parameters chained with !stack_output,
stack_tags, a Jinja template rendered with sceptre_user_data; and, beside them, the constructs formwright
cannot map (a custom resolver and hook, a Python template)."""

from __future__ import annotations

from pathlib import Path

FILES = {
    "config/config.yaml": """\
project_code: shop
region: us-east-1
required_version: ">=4.0"
stack_tags:
  team: platform
j2_environment:
  trim_blocks: true
""",
    # a stack group: its stack_tags replace the root's (sceptre's child_wins), its region is the root's
    "config/dev/config.yaml": """\
stack_tags:
  team: platform
  env: dev
""",
    "config/dev/network/queue.yaml": """\
template_path: queue.yaml
parameters:
  QueueName: {{ stack_group_config.project_code }}-dev-orders
""",
    "config/dev/network/params.yaml": """\
template_path: params.yaml
parameters:
  Value: !stack_output dev/network/queue.yaml::QueueArn
  Zones:
    - a
    - b
""",
    # sceptre 4's `<key>_inheritance: merge`: the app folder's stacks merge their stack_tags into the folder's
    "config/dev/app/config.yaml": """\
stack_tags:
  tier: app
stack_tags_inheritance: merge
""",
    "config/dev/app/service.yaml": """\
template_path: service.yaml.j2
dependencies:
  - dev/network/params.yaml
sceptre_user_data:
  names:
    - alpha
    - beta
parameters:
  QueueUrl: !stack_output dev/network/queue.yaml::QueueUrl
stack_tags:
  team: apps
stack_timeout: 30
""",
    "templates/queue.yaml": """\
Parameters:
  QueueName: {Type: String}
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Ref QueueName
Outputs:
  QueueArn: {Value: !GetAtt Queue.Arn}
  QueueUrl: {Value: !Ref Queue}
""",
    "templates/params.yaml": """\
Parameters:
  Value: {Type: String}
  Zones: {Type: CommaDelimitedList}
Resources:
  Param:
    Type: AWS::SSM::Parameter
    Properties:
      Type: String
      Value: !Ref Value
Outputs:
  ParamName: {Value: !Ref Param}
""",
    "templates/service.yaml.j2": """\
Parameters:
  QueueUrl: {Type: String}
Resources:
{% for name in sceptre_user_data.names %}
  {{ name | capitalize }}:
    Type: AWS::SSM::Parameter
    Properties:
      Type: String
      Value: !Ref QueueUrl
{% endfor %}
Outputs:
  First: {Value: !Ref Alpha}
""",
}

# Constructs formwright maps only as text (its resolvers and hooks) and ones it cannot map at all.
EXTRA = {
    "config/dev/app/worker.yaml": """\
template_path: queue.yaml
parameters:
  QueueName: !environment_variable WORKER_QUEUE
  Token: !secretsmanager app/token
  Host: !ssm /app/db/host
  Other: !stack_output_external other-stack::Url
  Motd: !file_contents files/motd.txt
  Custom: !my_resolver something
  Joined: !join [",", [x, y]]
  Mixed: [a, !my_resolver b]
  Policy: !file files/policy.json
protect: true
hooks:
  before_create:
    - !cmd "echo creating"
    - !cmd {run: "echo $0", shell: /bin/bash}
  after_update:
    - !my_hook notify
""",
    "config/dev/app/legacy.yaml": """\
template_path: legacy.py
""",
    "config/dev/app/old.yaml": """\
template_path: queue.yaml
obsolete: true
""",
    "config/dev/app/skipped.yaml": """\
template_path: queue.yaml
ignore: true
""",
    "templates/legacy.py": "def sceptre_handler(sceptre_user_data):\n    return '{}'\n",
    "files/motd.txt": "hello\n",
    "files/policy.json": "{}",
}


def write(root: Path, files: dict[str, str]) -> Path:
    """Write the files under `root`; return `root`."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root

# The project `sceptre launch` deploys in tests/sceptre/test_sceptre_deployed.py: FILES and a third nested
# folder whose stack reads a value through each resolver sceptre and formwright both have, and runs `!cmd`
# hooks. Before the launch the test makes the SSM parameter /shop/db/host and the stack `shop-external`
# (output Endpoint), sets SHOP_OWNER and HOOK_LOG (the file the hooks append to), and runs sceptre from the
# project's folder (sceptre's file resolvers read paths relative to it).
LAUNCHED = {
    **FILES,
    "config/dev/shared/config.yaml": """\
parameters:
  Owner: !environment_variable SHOP_OWNER
""",
    "config/dev/shared/settings.yaml": """\
template_path: settings.yaml
parameters_inheritance: merge
parameters:
  Queue: !stack_output dev/network/queue.yaml::QueueArn
  Host: !ssm /shop/db/host
  External: !stack_output_external shop-external::Endpoint
  Motd: !file_contents files/motd.txt
  Banner: !file files/banner.txt
  Path: !join ["/", [orders, "{{ stack_group_config.region }}"]]
  Second: !select [1, !split [",", "red,green,blue"]]
  Greeting: !sub ["{name}-{env}", {name: shop, env: dev}]
  Optional: !no_value
  Shout: !rcmd "echo shop | tr a-z A-Z"
hooks:
  before_create:
    - !cmd "echo before-create settings >> \\"$HOOK_LOG\\""
  after_create:
    - !cmd "echo after-create settings >> \\"$HOOK_LOG\\""
""",
    "templates/settings.yaml": """\
Parameters:
  Owner: {Type: String}
  Queue: {Type: String}
  Host: {Type: String}
  External: {Type: String}
  Motd: {Type: String}
  Banner: {Type: String}
  Path: {Type: String}
  Second: {Type: String}
  Greeting: {Type: String}
  Optional: {Type: String, Default: fallback}
  Shout: {Type: String}
Resources:
  Setting:
    Type: AWS::SSM::Parameter
    Properties:
      Type: String
      Value: !Sub "${Owner} ${Queue} ${Host} ${External} ${Path} ${Second} ${Greeting} ${Optional}"
Outputs:
  SettingName: {Value: !Ref Setting}
""",
    "files/motd.txt": "welcome to the shop\n",
    "files/banner.txt": "open 9-5",
}

# What the test makes before `sceptre launch`: the stack `!stack_output_external` reads.
EXTERNAL_TEMPLATE = """\
Resources:
  Topic: {Type: AWS::SNS::Topic}
Outputs:
  Endpoint: {Value: !Ref Topic}
"""
