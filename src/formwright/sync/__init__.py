"""GitOps: CloudFormationStack objects (the Flux controller's schema) kept in step with git sources.

`objects` parses the documents, `source` fetches git, `reconcile` is the per-object loop,
`status_store` keeps status in SQLite, `daemon` schedules thousands of objects, `k8s` is the
kopf operator over the same loop.
"""
