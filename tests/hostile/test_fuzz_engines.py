"""Issue #17 item 7: the macro engine and the TOSCA loader end any input in formwright's own error
type or a result, never another exception. Bounded in examples so `make test` stays fast.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from formwright.errors import FormwrightError
from formwright.macros import MacroRegistry, expand

_NAMES = st.sampled_from(["A", "B", "Id", "Items", "Env", "X", "AWS::NoValue", "AWS::Region", "Cond", "M"])
_SCALARS = st.one_of(_NAMES, st.text(max_size=8), st.integers(-3, 3), st.booleans(), st.none(),
                     st.sampled_from(["${Id}", "${AWS::Region}", "&{Id}", "a,b", "", "Fn::ForEach::x"]))
_FUNCTIONS = ["Ref", "Fn::Sub", "Fn::Join", "Fn::Select", "Fn::Split", "Fn::If", "Fn::FindInMap",
              "Fn::Length", "Fn::ToJsonString", "Fn::Base64", "Fn::GetAtt", "Fn::Equals", "Fn::Not",
              "Fn::And", "Fn::Or", "Condition", "Fn::ForEach::Loop", "Fn::Transform", "Fn::ImportValue"]


def _values() -> st.SearchStrategy:
    return st.recursive(
        _SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.one_of(_NAMES, st.sampled_from(_FUNCTIONS)), inner, max_size=3),
        ),
        max_leaves=20,
    )


_TEMPLATES = st.fixed_dictionaries(
    {"Transform": st.sampled_from(["AWS::LanguageExtensions", ["AWS::LanguageExtensions"]]),
     "Resources": st.dictionaries(st.one_of(_NAMES, st.just("Fn::ForEach::Q")), _values(), max_size=3)},
    optional={"Conditions": st.dictionaries(_NAMES, _values(), max_size=2),
              "Mappings": st.dictionaries(_NAMES, _values(), max_size=2),
              "Parameters": st.dictionaries(_NAMES, st.fixed_dictionaries(
                  {"Type": st.sampled_from(["String", "CommaDelimitedList", "Number"])},
                  optional={"Default": _SCALARS}), max_size=2),
              "Outputs": st.dictionaries(st.one_of(_NAMES, st.just("Fn::ForEach::O")), _values(),
                                         max_size=2)},
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEMPLATES)
def test_macro_engine_never_crashes(template: dict) -> None:
    registry = MacroRegistry.build()
    with contextlib.suppress(FormwrightError):
        result = expand(json.loads(json.dumps(template)), registry=registry)
        json.dumps(result, allow_nan=False)  # whatever it returns can be sent as JSON


_TOSCA = """\
tosca_definitions_version: tosca_simple_yaml_1_0
topology_template:
  inputs:
    port: {type: integer, default: 80}
  node_templates:
    server:
      type: tosca.nodes.Compute
      capabilities:
        host: {properties: {num_cpus: 1, mem_size: 1 GB}}
        os: {properties: {type: linux, distribution: ubuntu}}
    web:
      type: tosca.nodes.WebServer
      requirements:
        - host: server
"""
_LINES = _TOSCA.splitlines()
_BROKEN_LINES = ["", "  ", "x: [", "derived_from: web", "type: tosca.nodes.Nope", "- host: nowhere",
                 "{ get_input: nope }", "!!set {a: 1}", ".nan",
                 "tosca_definitions_version: tosca_simple_yaml_9_9", "]]]", "&a *a",
                 "default: { get_attribute: [web, x, y] }", "num_cpus: -1"]
_EDITS = st.lists(st.tuples(st.integers(0, len(_LINES) - 1), st.sampled_from(_BROKEN_LINES)),
                  min_size=1, max_size=4)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(_EDITS)
@example([(8, ""), (9, "- host: nowhere")])  # a node's capabilities as a list (found by a full run)
def test_tosca_loader_never_crashes(tmp_path: Path, edits: list[tuple[int, str]]) -> None:
    from formwright.tosca.loader import load_model
    from formwright.tosca.source import open_source

    lines = list(_LINES)
    for index, text in edits:
        indent = len(lines[index]) - len(lines[index].lstrip())
        lines[index] = " " * indent + text
    path = tmp_path / "service.yaml"
    path.write_text("\n".join(lines) + "\n")
    with contextlib.suppress(FormwrightError):
        load_model(open_source(path))
