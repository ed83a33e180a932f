"""The CloudFormation helper scripts (cfn-init, cfn-signal, cfn-hup) of the local cloud's booted instances.

Copied into each instance's root at boot (/opt/aws/lib/cfn_bootstrap, commands in /opt/aws/bin and
/usr/local/bin) by `formwright.cloud.instances.helpers`; they run on the instance's own python3 with the
standard library only, and reach the local cloud on the instance network (`cloud.py`). Their options, files
and messages follow AWS's helper scripts ("CloudFormation helper scripts reference", AWS CloudFormation User
Guide: cfn-init, cfn-signal, cfn-hup; "AWS::CloudFormation::Init").
"""
