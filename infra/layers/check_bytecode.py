"""`make sam-build` runs this after `sam build`: every layer must ship Lambda-usable bytecode.

Lambda's /opt is read-only, so a module without a valid ``.pyc`` beside it is compiled again at every cold start (the
shared layer's sources alone cost the plain handlers ~300 ms: bench/README.md, "Session 10"). Checks each layer under
.aws-sam/build: every ``.py`` has ``__pycache__/<name>.cpython-312.pyc`` written in unchecked-hash mode (flags 0b01 in
the header: a zip's rounded mtimes cannot invalidate it). Exits 1 listing what is missing.
"""

from __future__ import annotations

import sys
from pathlib import Path

BUILD = Path('.aws-sam/build')
LAYERS = ('SharedLayer', 'EmbeddingsLayer', 'McpLayer')
UNCHECKED_HASH = 0b01  # PEP 552: bit 0 = hash-based, bit 1 = check_source


def problems(layer: Path) -> list[str]:
    found = []
    for source in sorted((layer / 'python').rglob('*.py')):
        cached = source.parent / '__pycache__' / f'{source.stem}.cpython-312.pyc'
        if not cached.is_file():
            found.append(f'{source}: no {cached.name}')
        elif int.from_bytes(cached.read_bytes()[4:8], 'little') != UNCHECKED_HASH:
            found.append(f'{cached}: not an unchecked-hash .pyc')
    return found


def main() -> int:
    missing = [layer for layer in LAYERS if not (BUILD / layer / 'python').is_dir()]
    if missing:
        print(f'no built layer {missing} under {BUILD}: run `make sam-build` first', file=sys.stderr)
        return 2
    failed = 0
    for layer in LAYERS:
        found = problems(BUILD / layer)
        modules = sum(1 for _ in (BUILD / layer / 'python').rglob('*.py'))
        print(f'{layer}: {modules} modules, {modules - len(found)} with their python3.12 bytecode')
        for line in found[:20]:
            print(f'  {line}', file=sys.stderr)
        failed += bool(found)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
