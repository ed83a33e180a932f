"""`host` requirements the orchestrator fulfils (tosca/fulfil.py): a node type or a node_filter instead of a
node template (TOSCA 1.0 section 3.7.2: a node type there is for the provider to select a matching node
template; tosca-parser's test_toscatpl.py loads test_node_filter.yaml as valid)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.tosca.fulfil import least_value, satisfies
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


def _compute(name: str, cpus: int, memory: str) -> str:
    return (f"    {name}:\n      type: tosca.nodes.Compute\n      capabilities:\n        host:\n"
            f"          properties: {{num_cpus: {cpus}, mem_size: {memory}}}\n")


def test_the_compute_the_node_filter_matches_hosts_it(tmp_path: Path):
    # cloudnet-tosca-toolbox's OASIS 1.2 example-2-21: one Compute matches the filters, one does not
    src = write_template(tmp_path, NODE_FILTER + _compute("small", 1, "1 GB") + _compute("big", 2, "4096 MB"))
    result = transform_tosca(src, None)
    assert [str(w) for w in result.warnings] == [
        f"{src}:8: requirement 'host' of node template 'test' names no node template: placed on the Compute "
        "its node_filter matches 'big'"]


def test_two_computes_the_filter_matches_make_the_choice_the_users(tmp_path: Path):
    src = write_template(tmp_path, NODE_FILTER + _compute("a", 2, "2 GB") + _compute("b", 4, "8 GB"))
    with pytest.raises(InputError) as err:
        transform_tosca(src, None)
    assert str(err.value) == (f"{src}:8: requirement 'host' of node template 'test' names no node template, "
                              "and 2 Computes could host it: a, b (name one with `node:`)")


def test_no_compute_the_filter_matches_is_a_new_one(tmp_path: Path):
    src = write_template(tmp_path, NODE_FILTER + _compute("tiny", 1, "512 MB"))
    result = transform_tosca(src, None)
    assert "a Compute 'test_host' is made for it (num_cpus 1, mem_size 2 GB)" in str(result.warnings[0])
    assert set(resources_of(result.template, "AWS::EC2::Instance")) == {"Tiny", "TestHost"}


@pytest.mark.parametrize(("value", "constraints", "ok"), [
    ("4096 MB", {"greater_or_equal": "2 GB"}, True),
    ("1 GiB", {"greater_or_equal": "2 GB"}, False),
    (2, {"in_range": [1, 4]}, True),
    (8, {"in_range": [1, 4]}, False),
    ("Linux", "linux", True),
    ("x86_64", {"valid_values": ["arm64"]}, False),
    (None, {"greater_or_equal": 1}, False),  # unset: not shown to match
])
def test_a_value_satisfies_a_property_filter(value, constraints, ok):
    assert satisfies(value, constraints) is ok


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
