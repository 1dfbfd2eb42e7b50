"""Robot directives: allowlist, SDK-backed validation, the recording proxy, executors."""
