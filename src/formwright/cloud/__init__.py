"""boto3 sessions for the target (AWS or the embedded local cloud) and the local cloud itself."""
