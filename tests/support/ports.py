"""Local TCP ports chosen by the operating system, never guessed (a fixed port such as 9 is not reliably closed)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago: bound to port 0, read back, released.

    Nothing listens on it afterwards, so it also serves as a closed port for "unreachable" tests."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(('127.0.0.1', 0))
        port: int = probe.getsockname()[1]
        return port
