"""The Kubernetes operator (kopf) over the sync reconcile loop: `kopf run -m formwright.sync.k8s.operator`."""
