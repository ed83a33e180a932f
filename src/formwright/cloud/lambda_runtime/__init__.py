"""Lambda functions that run in the local cloud, without Docker (docs/local-cloud.md, "Lambda").

A python3.x or nodejs function runs from its uploaded .zip in a child process under Lambda's
contract (contract.py, runner.py, bootstrap.py / bootstrap.js); Invoke, Lambda-backed custom
resources, SQS event source mappings and S3 notifications reach it. install.py puts it into moto.
"""
