"""What the CLI's commands share: their errors (each with its exit code) and the context a command acts on."""

from __future__ import annotations

import argparse

from agent_memory.cli.client import KEY_HINT, Client


class UsageError(Exception):
    """The command line is wrong (exit code 2); the message says how."""

    def __init__(self, message: str, usage: str = '') -> None:
        super().__init__(message)
        self.usage = usage


class Incomplete(Exception):
    """The command did its part, but the service did not finish all of it: extraction failed for some turns, or waiting
    for it timed out (exit code 4). The summary was printed; the message says what is missing."""


def context_of(client: Client, args: argparse.Namespace) -> str:
    """``--context``, else the context the key belongs to (a key fixes its context; GET /api/v1/me says which)."""
    if args.context:
        return str(args.context)
    if not client.key:
        raise UsageError(f'which context? pass --context, or {KEY_HINT}: a context key belongs to one context')
    if not hasattr(args, 'key_context_found'):
        args.key_context_found = str(client.call('GET', '/api/v1/me')['contextId'])
    return str(args.key_context_found)
