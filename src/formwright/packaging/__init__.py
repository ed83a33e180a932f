"""Packaging local artifacts as `aws cloudformation package` does, on every deploy, plan and build.

`package_template` walks a template for the places the AWS CLI packages (`places.PLACES`), plus rain's
`Rain::*` directives, zips folders reproducibly, names each artifact by its content hash and rewrites the
template as the AWS CLI does; nested templates are packaged the same way, recursively. Nothing here calls
the cloud: `upload.upload_artifacts` puts what a deploy needs, only what is not there yet.
"""

from formwright.packaging.artifacts import Artifact, Packaged
from formwright.packaging.packager import Packager, package_template

__all__ = ["Artifact", "Packaged", "Packager", "package_template"]
