"""Register a package without running its ``__init__`` until one of its top-level names is asked for.

Some SDKs import every optional part from their package ``__init__`` (the SurrealDB SDK: ``aiohttp`` and
``requests`` for transports an embedded or ``ws://`` database never uses; the MCP SDK: its client and the
high-level server). That cost lands on every cold start (``bench/coldstart.py``). After
``defer_package_init(name)``, importing a submodule works as usual and loads only what that submodule needs;
the first access to any other top-level name (``from pkg import X``, ``pkg.X``) runs the real ``__init__``
into the same module object, so every name resolves to the same objects as with a plain ``import pkg``.
A package that is already imported is left as it is.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from typing import Any

_lock = threading.Lock()


def defer_package_init(name: str) -> None:
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        raise ImportError(f'{name} is not an installed package')
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def run_package_init(attribute: str) -> Any:
        if not attribute.startswith('__') and importlib.util.find_spec(f'{name}.{attribute}') is not None:
            return importlib.import_module(f'{name}.{attribute}')  # ``from pkg import submodule`` needs no __init__
        with _lock:
            if package.__dict__.pop('__getattr__', None) is not None:
                loader.exec_module(package)
        if attribute in package.__dict__:
            return package.__dict__[attribute]
        raise AttributeError(f'module {name!r} has no attribute {attribute!r}')

    package.__getattr__ = run_package_init  # type: ignore[method-assign]
    sys.modules[name] = package
