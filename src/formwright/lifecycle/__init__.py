"""Deployment instances and their lifecycle: create, update, upgrade, rollback, delete, retry, scope, day-2
operations; pre/post/OnError events with actions; a journal to resume from."""
