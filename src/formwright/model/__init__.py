"""The project: formwright.yaml loaded into a tree of named objects, with references and inputs."""

from formwright.model.project import OutputRef, Project, StackConfig, find_project_file, load_project

__all__ = ["OutputRef", "Project", "StackConfig", "find_project_file", "load_project"]
