"""Local runtime: serves template.yaml's HTTP API routes, the worker and sweep timers in one process."""
