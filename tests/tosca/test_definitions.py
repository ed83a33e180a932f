"""Type definitions checked before the topology (OASIS test assertions of TOSCA Simple Profile 1.0), and
get_input's argument form per version."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.transform.cloudformation import transform_tosca

from .conftest import write_template


def _fails(src: Path, out: Path) -> str:
    with pytest.raises(InputError) as err:
        transform_tosca(src, out, inputs={})
    assert not out.exists()
    text = str(err.value)
    assert "\n" not in text and "Traceback" not in text
    return text


UNKNOWN_PARENT = """
    capability_types:
      my.capabilities.Feature:
        derived_from: my.capabilities.Missing
    """
UNKNOWN_PROPERTY_TYPE = """
    data_types:
      my.datatypes.Person:
        derived_from: tosca.datatypes.Root
        properties:
          name:
            type: string
          home:
            type: my.datatypes.Nowhere
    topology_template:
      node_templates:
        vm:
          type: tosca.nodes.Compute
    """


@pytest.mark.parametrize(("body", "expected"), [
    # OASIS 3.6.6-capability_types-03-unknown-parent-type: InvalidParentType, even with no topology
    (UNKNOWN_PARENT, "5: capability type 'my.capabilities.Feature' derives from 'my.capabilities.Missing', "
                     "which is not a known capability type"),
    # OASIS 3.6.5-data_type-05-complex_type_complex_property_unknown: UnknownDataType
    (UNKNOWN_PROPERTY_TYPE, "10: property 'home' of data type 'my.datatypes.Person' has type "
                            "'my.datatypes.Nowhere', which is not a known data type"),
    # a topology without nodes is refused last, so what else is wrong with it is reported
    # tosca-parser's test_invalid_input_defaults.yaml: the default's type, not the missing nodes
    ("""
     topology_template:
       inputs:
         count:
           type: integer
           default: many
     """, '7: TOSCA validation failed: "many" is not an integer'),
    # tosca-parser's test_concat_invalid.yaml
    ("""
     topology_template:
       outputs:
         joined:
           value: { concat: [] }
     """, "6: concat needs at least 1 argument, got []"),
])
def test_what_is_wrong_is_named_at_its_line(tmp_path: Path, body: str, expected: str):
    src = write_template(tmp_path, body)
    assert _fails(src, tmp_path / "out").startswith(f"{src}:{expected}")


def test_known_parents_of_every_kind_transform(tmp_path: Path):
    # short names, a primitive parent of a data type (OASIS 3.6.5-data_type-10-extend_native), TOSCA 1.3
    # normative types tosca-parser's definitions lack, and a capability type written under node_types
    # (tosca-parser accepts it: heat-translator's test_tosca_get_functions_semantic.yaml)
    src = write_template(tmp_path, """
        data_types:
          my.datatypes.Name:
            derived_from: string
          my.datatypes.Pair:
            derived_from: tosca.datatypes.Root
            properties:
              port:
                type: PortDef
              name:
                type: my.datatypes.Name
        capability_types:
          my.capabilities.Big:
            derived_from: tosca.capabilities.Compute
        interface_types:
          my.interfaces.Extra:
            derived_from: tosca.interfaces.Root
        node_types:
          my.capabilities.Misplaced:
            derived_from: tosca.capabilities.Endpoint
          my.nodes.Server:
            derived_from: Compute
        topology_template:
          node_templates:
            vm:
              type: my.nodes.Server
        """)
    transform_tosca(src, tmp_path / "out", inputs={})
    assert (tmp_path / "out" / "template.yaml").is_file()


def test_get_input_with_a_list_before_1_3_says_so(tmp_path: Path):
    # TOSCA 1.3 section 4.4.1 added the [input, key or index, ...] form; tosca-parser's
    # test_invalid_function_signature.yaml (1.0) expects one argument
    src = write_template(tmp_path, """
        topology_template:
          inputs:
            cpus:
              type: integer
          node_templates:
            vm:
              type: tosca.nodes.Compute
              capabilities:
                host:
                  properties:
                    num_cpus: { get_input: [cpus, cpus] }
        """)
    text = _fails(src, tmp_path / "out")
    assert text.startswith(f"{src}:13: get_input takes one input name") and "TOSCA 1.3" in text


def test_a_topology_without_nodes_is_refused_last(tmp_path: Path):
    src = write_template(tmp_path, """
        topology_template:
          inputs:
            count:
              type: integer
              default: 2
        """)
    assert _fails(src, tmp_path / "out").startswith(f"{src}:3: topology_template has no node_templates")
