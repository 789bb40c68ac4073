"""`make sam-build` runs this after `sam build`: every layer must ship Lambda-usable python3.12 bytecode.

Lambda's /opt is read-only, so a module without a valid ``.pyc`` is compiled again at every cold start (the shared
layer's sources alone cost the plain handlers ~300 ms: bench/README.md, "Session 10"). The layout bytecode.py builds:

* ``agent_memory`` (SharedLayer) keeps its sources: every ``.py`` has ``__pycache__/<name>.cpython-312.pyc``;
* everything else is sourceless: a ``<name>.pyc`` per module, no ``.py`` and no ``__pycache__`` left, except the few
  modules that read their own source (bytecode.SOURCES_NEEDED), which keep it like ``agent_memory``.

Every ``.pyc`` must carry python3.12's magic number (another version's sourceless bytecode does not import at all) and
be unchecked-hash (flags 0b01 in the header: a zip's rounded mtimes cannot invalidate it). Exits 1 listing what is wrong.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bytecode import SOURCES_NEEDED  # noqa: E402

BUILD = Path('.aws-sam/build')
LAYERS = ('SharedLayer', 'EmbeddingsLayer', 'McpLayer')
SOURCES_KEPT = {'SharedLayer': ('agent_memory',)}  # infra/layers/Makefile: $(call compile_bytecode,agent_memory)
MAGIC_312 = (3531).to_bytes(2, 'little') + b'\r\n'  # importlib.util.MAGIC_NUMBER of python3.12
UNCHECKED_HASH = 0b01  # PEP 552: bit 0 = hash-based, bit 1 = check_source


def pyc_problem(pyc: Path) -> str | None:
    header = pyc.read_bytes()[:8]
    if header[:4] != MAGIC_312:
        return f'{pyc}: not python3.12 bytecode'
    if int.from_bytes(header[4:8], 'little') != UNCHECKED_HASH:
        return f'{pyc}: not an unchecked-hash .pyc'
    return None


def cached_problem(source: Path) -> str | None:
    cached = source.parent / '__pycache__' / f'{source.stem}.cpython-312.pyc'
    return f'{source}: no {cached.name}' if not cached.is_file() else pyc_problem(cached)


def problems(layer: Path, kept: tuple[str, ...] = (), sources_needed: tuple[str, ...] = SOURCES_NEEDED) -> list[str]:
    found: list[str | None] = []
    root = layer / 'python'
    for entry in sorted(root.iterdir()):
        if entry.name in kept:
            found += [cached_problem(source) for source in sorted(entry.rglob('*.py'))]
            continue
        paths = sorted(entry.rglob('*')) if entry.is_dir() else [entry]
        needed = {p for p in paths if p.relative_to(root).as_posix() in sources_needed}
        allowed_caches = {p.parent / '__pycache__' for p in needed}
        found += [cached_problem(p) for p in sorted(needed)]
        found += [f'{p}: a source left beside sourceless bytecode' for p in paths if p.suffix == '.py' and p not in needed]
        found += [f'{p}: a __pycache__ in a sourceless package' for p in paths if p.name == '__pycache__' and p not in allowed_caches]
        found += [pyc_problem(p) for p in paths if p.suffix == '.pyc' and p.parent not in allowed_caches]
    return [line for line in found if line]


def modules(layer: Path) -> int:
    return sum(1 for p in (layer / 'python').rglob('*') if p.suffix in ('.py', '.pyc') and p.parent.name != '__pycache__')


def main() -> int:
    missing = [layer for layer in LAYERS if not (BUILD / layer / 'python').is_dir()]
    if missing:
        print(f'no built layer {missing} under {BUILD}: run `make sam-build` first', file=sys.stderr)
        return 2
    failed = 0
    for layer in LAYERS:
        kept = SOURCES_KEPT.get(layer, ())
        found = problems(BUILD / layer, kept)
        count = modules(BUILD / layer)
        sources = f', sources kept for {", ".join(kept)}' if kept else ''
        print(f'{layer}: {count} modules, {count - len(found)} with valid python3.12 bytecode{sources}')
        for line in found[:20]:
            print(f'  {line}', file=sys.stderr)
        failed += bool(found)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
