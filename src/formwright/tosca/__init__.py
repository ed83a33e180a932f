"""TOSCA Simple Profile service templates and CSARs parsed into an EffectiveModel."""

from formwright.tosca.loader import load_model
from formwright.tosca.model import EffectiveModel, Node, Relationship
from formwright.tosca.source import Source, open_source

__all__ = ["EffectiveModel", "Node", "Relationship", "Source", "load_model", "open_source"]
