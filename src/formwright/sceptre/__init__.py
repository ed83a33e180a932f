"""Converting sceptre projects into formwright projects (`formwright import-sceptre`)."""
