"""formwright: an infrastructure-as-code engine for AWS CloudFormation."""

__version__ = "0.1.0"
