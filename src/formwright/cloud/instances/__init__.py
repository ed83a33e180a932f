"""Booting EC2 instances in the local cloud (`local_cloud: {instances: boot}`, docs/local-cloud.md).

`image.sh` builds the cached Debian root once per machine; `boot` gives each instance a copy of it, its own
network, PID and mount namespaces on a private bridge, and runs its UserData as cloud-init does; `hooks`
ties that to moto's instances (terminate, GetConsoleOutput).
"""
