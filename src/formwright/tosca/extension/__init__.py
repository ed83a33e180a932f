"""TOSCA Simple Profile 1.1 for tosca-parser, through its own extension mechanism (no fork).

tosca-parser 2.x knows `tosca_simple_yaml_1_0`, `1_2` and `1_3`. It loads further versions from the
`toscaparser.extensions` entry point group: a class with `VERSION`, `DEFS_FILE` (type definitions
merged into its normative ones) and `SECTIONS` (top-level keys the version adds). formwright's
pyproject declares this class there. 1.1 adds no normative type tosca-parser lacks (its definitions
file already carries the 1.1-1.3 types), so `DEFS_FILE` is empty; `metadata` is the top-level section
1.1 introduced. `ensure_versions` registers the same when the entry point is not installed (a source
checkout run without `pip install`), and adds the few 1.2 properties tosca-parser's definitions lack
(`additions.yaml`).
"""

from __future__ import annotations

from importlib import resources

import yaml

SIMPLE_1_1 = "tosca_simple_yaml_1_1"
VERSIONS = ("tosca_simple_yaml_1_0", SIMPLE_1_1, "tosca_simple_yaml_1_2", "tosca_simple_yaml_1_3")
# each version's namespace URI, which the spec also allows as the value (the OASIS test assertion
# 3.1.2-tosca_definitions_version-02-valid-definition-url); tosca-parser knows only the short names
NAMESPACES = {f"http://docs.oasis-open.org/tosca/ns/simple/yaml/1.{n}": f"tosca_simple_yaml_1_{n}"
              for n in range(4)}


def short_version(version: object) -> str:
    """The short name of a `tosca_definitions_version` value (its namespace URI read as the version)."""
    return NAMESPACES.get(str(version).rstrip("/"), str(version))


class Simple11:
    """The tosca-parser extension for tosca_simple_yaml_1_1."""

    VERSION = SIMPLE_1_1
    DEFS_FILE = "simple_1_1.yaml"
    SECTIONS = ("metadata",)


def _add_properties() -> None:
    from toscaparser.elements.entity_type import EntityType

    text = (resources.files(__package__) / "additions.yaml").read_text(encoding="utf-8")
    for type_name, extra in yaml.safe_load(text).items():
        definition = EntityType.TOSCA_DEF.get(type_name)
        if isinstance(definition, dict):
            properties = definition.setdefault("properties", {})
            for name, schema in extra["properties"].items():
                properties.setdefault(name, schema)


# TOSCA 1.1's names of the 1.0 storage nodes (formwright's profile defines them as their 1.0 types)
RENAMED_STORAGE = ("tosca.nodes.Storage.BlockStorage", "tosca.nodes.Storage.ObjectStorage")


def _allow_renamed_storage() -> None:
    from toscaparser.unsupportedtype import UnsupportedType

    UnsupportedType.un_supported_types = [t for t in UnsupportedType.un_supported_types
                                          if t not in RENAMED_STORAGE]


_ready = False


def ensure_versions() -> None:
    """Make sure tosca-parser accepts every version in VERSIONS (templates and imports), once."""
    global _ready
    if _ready:
        return
    from toscaparser.elements.tosca_type_validation import TypeValidation
    from toscaparser.tosca_template import ToscaTemplate

    _add_properties()
    _allow_renamed_storage()
    _ready = True

    for version in VERSIONS:
        if version not in ToscaTemplate.VALID_TEMPLATE_VERSIONS:
            ToscaTemplate.MAIN_TEMPLATE_VERSIONS.append(version)  # no definitions file to merge
            ToscaTemplate.VALID_TEMPLATE_VERSIONS.append(version)
        ToscaTemplate.ADDITIONAL_SECTIONS.setdefault(version, Simple11.SECTIONS)
        if version not in TypeValidation.VALID_TEMPLATE_VERSIONS:
            TypeValidation.VALID_TEMPLATE_VERSIONS.append(version)
