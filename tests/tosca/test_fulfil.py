"""`host` requirements the orchestrator fulfils (tosca/fulfil.py): a node type or a node_filter instead of a
node template (TOSCA 1.0 section 3.7.2: a node type there is for the provider to select a matching node
template; tosca-parser's test_toscatpl.py loads test_node_filter.yaml as valid)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.tosca.fulfil import least_value
from formwright.transform.cloudformation import transform_tosca

from .conftest import lint_errors, resources_of, write_template

# tosca-parser's samples/tests/data/node_filter/test_node_filter.yaml, as its test_toscatpl.py loads it
NODE_FILTER = """
topology_template:
  node_templates:
    test:
      type: tosca.nodes.DBMS
      requirements:
        - host:
            node_filter:
              capabilities:
                - host:
                    properties:
                      - num_cpus: { in_range: [ 1, 4 ] }
                      - mem_size: { greater_or_equal: 2 GB }
"""


def test_a_host_made_to_the_node_filters_measure(tmp_path: Path):
    src = write_template(tmp_path, NODE_FILTER)
    result = transform_tosca(src, None)
    assert [str(w) for w in result.warnings] == [
        f"{src}:8: requirement 'host' of node template 'test' names no node template: a Compute 'test_host' "
        "is made for it (num_cpus 1, mem_size 2 GB)"]
    (instance,) = resources_of(result.template, "AWS::EC2::Instance").values()
    assert instance["Properties"]["InstanceType"] == "t3.small"  # 2 vCPUs, 2 GiB: the least with 2 GB
    assert lint_errors(result.template) == []


def test_strict_refuses_to_choose_a_host(tmp_path: Path):
    with pytest.raises(InputError, match="names no node template"):
        transform_tosca(write_template(tmp_path, NODE_FILTER), None, strict=True)


def test_a_compute_type_as_the_host_is_the_only_compute(tmp_path: Path):
    body = """
topology_template:
  node_templates:
    app:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: tosca.nodes.Compute
    vm:
      type: tosca:Compute
"""
    src = write_template(tmp_path, body)
    result = transform_tosca(src, None)
    assert [str(w) for w in result.warnings] == [
        f"{src}:8: requirement 'host' of node template 'app' names no node template: placed on the only "
        "Compute 'vm'"]
    assert set(resources_of(result.template, "AWS::EC2::Instance")) == {"Vm"}


def test_two_computes_make_the_choice_the_users(tmp_path: Path):
    src = write_template(tmp_path, NODE_FILTER + """    a:
      type: tosca.nodes.Compute
    b:
      type: tosca.nodes.Compute
""")
    with pytest.raises(InputError) as err:
        transform_tosca(src, None)
    assert str(err.value) == (f"{src}:8: requirement 'host' of node template 'test' names no node template, "
                              "and 2 Computes could host it: a, b (name one with `node:`)")


@pytest.mark.parametrize(("constraints", "least"), [
    ({"in_range": [1, 4]}, 1),
    ({"greater_or_equal": "2 GB"}, "2 GB"),
    ({"greater_than": 2}, 3),
    ([{"greater_or_equal": 2}, {"less_than": 8}], 2),
    ({"valid_values": [4, 8]}, 4),
    ({"equal": "x86_64"}, "x86_64"),
    ({"less_than": 8}, None),  # nothing said about the least: the type's default applies
    ("ubuntu", "ubuntu"),
])
def test_least_value_a_filter_allows(constraints, least):
    assert least_value(constraints) == least
