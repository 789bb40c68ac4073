"""``agent-memory``: the operator CLI. It speaks HTTP to a local gateway or a deployed API.

    agent-memory contexts list | get ID | create ID [--config JSON] | delete ID
    agent-memory keys list CTX PRINCIPAL | mint CTX PRINCIPAL NAME [--ttl S] | rotate ... | revoke ...
    agent-memory sweep decay|expire|purge-traces|reindex (--context CTX | --all)
    agent-memory import FILE --context CTX [--infer full|none] [--batch 50]
    agent-memory export --context CTX [--output FILE]
    agent-memory stats --context CTX [--window-hours 24]

``--url`` / ``AGENT_MEMORY_URL`` (default http://127.0.0.1:3000), ``--key`` / ``AGENT_MEMORY_KEY`` (a context
key), ``--management-key`` / ``AGENT_MEMORY_MANAGEMENT_KEY``. Exit codes: 0 done, 1 the API refused (its
detail is printed), 2 bad usage or input file, 3 the API is unreachable.
"""
