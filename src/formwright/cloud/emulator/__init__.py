"""The local cloud's CloudFormation emulator, laid over moto's resource models.

moto creates, updates and deletes the resources; this package decides what a change set contains and
how it executes, as CloudFormation does: `resolve` evaluates a template under its parameters,
`schemas` reads the resource provider schemas cfn-lint ships, `checks` refuses what CloudFormation
refuses, `changes` computes a change set, `execute` runs it with rollback. docs/local-cloud.md is
the contract.
"""
