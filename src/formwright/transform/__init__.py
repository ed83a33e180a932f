"""Target plugins over the TOSCA EffectiveModel; each runs the same lifecycle (see `plugin`)."""

from formwright.transform.plugin import Plugin, run_plugin

__all__ = ["Plugin", "run_plugin"]
