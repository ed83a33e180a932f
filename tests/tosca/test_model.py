"""The EffectiveModel: tosca-parser parsing, types, defaults, requirements, operations, functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.tosca import load_model, open_source
from formwright.tosca.functions import AttributeRef, Concat, Context, InputRef, OperationOutputRef, Resolver

from .conftest import write_template

TOPOLOGY = """
imports:
  - types/custom.yaml
topology_template:
  inputs:
    cpus:
      type: integer
      default: 2
      constraints:
        - in_range: [ 1, 8 ]
    site_name:
      type: string
  node_templates:
    vm:
      type: tosca.nodes.Compute
      capabilities:
        host:
          properties:
            num_cpus: { get_input: cpus }
    web:
      type: toscana.nodes.WebServer.Apache
      requirements:
        - host: vm
    site:
      type: my.nodes.Site
      properties:
        title: { concat: [ "Site ", { get_input: site_name } ] }
      artifacts:
        page: files/index.html
      requirements:
        - host: web
        - backend:
            node: store
            relationship: tosca.relationships.ConnectsTo
      interfaces:
        Standard:
          configure:
            implementation: scripts/configure.sh
            inputs:
              server_ip: { get_attribute: [ HOST, private_address ] }
              store_port: { get_property: [ store, port ] }
              web_port: { get_property: [ web, port ] }
              token: { get_operation_output: [ SELF, Standard, create, token ] }
              endpoint: { get_attribute: [ store, database_endpoint, ip_address ] }
    store:
      type: tosca.nodes.Database.MySQL
      properties:
        name: store
      requirements:
        - host: dbms
    dbms:
      type: tosca.nodes.DBMS.MySQL
      requirements:
        - host: vm
  outputs:
    address:
      value: { get_attribute: [ vm, public_address ] }
"""
CUSTOM = """tosca_definitions_version: tosca_simple_yaml_1_0
node_types:
  my.nodes.Site:
    derived_from: tosca.nodes.WebApplication
    properties:
      title:
        type: string
      language:
        type: string
        default: en
    interfaces:
      Standard:
        create: scripts/create.sh
"""
FILES = {"types/custom.yaml": CUSTOM, "files/index.html": "<h1>hi</h1>", "scripts/create.sh": "#!/bin/sh\n",
         "scripts/configure.sh": "#!/bin/sh\n"}


@pytest.fixture
def model(tmp_path: Path):
    path = write_template(tmp_path, TOPOLOGY, files=FILES)
    with open_source(path) as source:
        return load_model(source, {"site_name": "Shop", "cpus": "4"})


def test_imports_custom_types_and_derived_from(model):
    site = model.nodes["site"]
    assert site.type == "my.nodes.Site"
    assert site.types[:3] == ["my.nodes.Site", "tosca.nodes.WebApplication", "tosca.nodes.Root"]
    assert model.nodes["web"].is_a("tosca.nodes.WebServer.Apache")  # toscana prefix accepted


def test_property_defaults_from_types(model):
    assert model.nodes["site"].properties["language"] == "en"
    assert model.nodes["store"].properties["user"] == "root"
    assert model.nodes["store"].properties["port"] == 3306
    assert model.nodes["web"].properties["port"] == 80


def test_requirements_become_relationships(model):
    rels = {(r.requirement, r.target, r.type) for r in model.nodes["site"].requirements}
    assert ("host", "web", "tosca.relationships.HostedOn") in rels
    assert ("backend", "store", "tosca.relationships.ConnectsTo") in rels
    assert model.root_host(model.nodes["site"]).name == "vm"


def test_interfaces_merge_type_and_template(model):
    ops = model.nodes["site"].operations
    assert ops["create"].implementation == "scripts/create.sh"  # from the type
    assert ops["configure"].implementation == "scripts/configure.sh"
    assert "server_ip" in ops["configure"].inputs
    assert ops["configure"].location.line is not None


def test_artifacts(model):
    assert model.nodes["site"].artifacts["page"].file == "files/index.html"


def test_inputs_typed_and_outputs(model):
    assert model.inputs["cpus"].value == 4
    assert model.inputs["site_name"].value == "Shop"
    assert "address" in model.outputs


def test_functions_resolve(model):
    resolver = Resolver(model)
    site = model.nodes["site"]
    ctx = Context(site)
    inputs = site.operations["configure"].inputs
    assert resolver.resolve(inputs["server_ip"], ctx) == AttributeRef("vm", "private_address", None, "site")
    assert resolver.resolve(inputs["store_port"], ctx) == 3306
    assert resolver.resolve(inputs["web_port"], ctx) == 80
    assert resolver.resolve(inputs["token"], ctx) == OperationOutputRef("site", "Standard", "create", "token")
    assert resolver.resolve(inputs["endpoint"], ctx) == AttributeRef(
        "store", "ip_address", "database_endpoint", "site"
    )
    assert resolver.resolve(site.properties["title"], ctx) == Concat(("Site ", InputRef("site_name", "Shop")))
    assert resolver.resolve({"get_attribute": ["vm", "tosca_name"]}, ctx) == "vm"
    rel = site.requirements[1]
    rel_ctx = Context(site, site, model.nodes[rel.target])
    assert resolver.resolve({"get_property": ["TARGET", "name"]}, rel_ctx) == "store"
    assert resolver.resolve({"get_property": ["SOURCE", "language"]}, rel_ctx) == "en"


def test_missing_required_inputs_listed_once(tmp_path: Path):
    body = TOPOLOGY.replace("    site_name:\n      type: string\n",
                            "    site_name:\n      type: string\n    other:\n      type: string\n")
    path = write_template(tmp_path, body, files=FILES)
    with open_source(path) as source, pytest.raises(InputError) as err:
        load_model(source, {})
    assert "missing required inputs: site_name, other" in str(err.value)


def test_input_constraint_violation(tmp_path: Path):
    path = write_template(tmp_path, TOPOLOGY, files=FILES)
    with open_source(path) as source, pytest.raises(InputError) as err:
        load_model(source, {"site_name": "x", "cpus": "64"})
    assert "input 'cpus'" in str(err.value) and f"{path}:" in str(err.value)
