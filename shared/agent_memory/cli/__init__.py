"""``agent-memory``: the operator CLI. It speaks HTTP to a local gateway or a deployed API.

    agent-memory whoami
    agent-memory contexts list | get CTX | create CTX [--config JSON] | delete CTX
    agent-memory keys list CTX PRINCIPAL | mint CTX PRINCIPAL NAME [--ttl S] | rotate ... | revoke ...
    agent-memory sweep decay|expire|purge-traces|reindex [--all]
    agent-memory import-conversations FILE [--format auto|chatgpt|claude|jsonl] [--infer full|none] [--wait]
    agent-memory export [--output FILE] [--traces]
    agent-memory import FILE
    agent-memory stats [--window-hours 24]

Options go before or after the command. --url / AGENT_MEMORY_URL (default http://127.0.0.1:$PORT, PORT defaulting to
3000); --key / AGENT_MEMORY_KEY (a context key); --management-key / AGENT_MEMORY_MANAGEMENT_KEY; --context (default:
the context the key belongs to). Keys are never printed. `agent-memory COMMAND --help` shows examples.

Exit codes: 0 done, 1 the API refused (its detail is printed), 2 bad usage or input file (the position is printed),
3 the API is unreachable, 4 stored, but extraction failed for some turns or --wait timed out.
"""
