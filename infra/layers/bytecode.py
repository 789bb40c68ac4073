"""Compile a built layer's ``python/`` folder to python3.12 bytecode (infra/layers/Makefile runs it after pip).

Lambda's /opt is read-only: a module without a valid ``.pyc`` is compiled again at every cold start (the shared layer's
sources alone cost the plain handlers ~300 ms: bench/README.md, "Session 10"). Two layouts, both unchecked-hash (a
zip's rounded mtimes cannot invalidate them):

* the entries named on the command line (``agent_memory``) keep their sources and get ``__pycache__/*.cpython-312.pyc``
  beside them, so tracebacks from our own code show the lines;
* every other (third-party) module becomes sourceless bytecode: ``name.pyc`` where ``name.py`` was, and the source is
  deleted. That roughly halves their unzipped size (the MCP function's layers held ~27 MB of third-party ``.py``);
  their tracebacks still name the file (``/opt/python/<package>/<module>.py``) and line, without the line's text.
  The few modules that read their own source at import keep it (SOURCES_NEEDED), with ``__pycache__`` bytecode.

Run by the layer's own interpreter: bytecode of another Python version would be ignored (and sourceless bytecode would
not import at all), so with any other interpreter this prints a warning and changes nothing.
"""

from __future__ import annotations

import compileall
import importlib.util
import py_compile
import sys
from pathlib import Path

LAMBDA_ROOT = '/opt/python'  # where a layer's python/ is mounted: the file names tracebacks show
MODE = py_compile.PycInvalidationMode.UNCHECKED_HASH
# Third-party modules that read their own source when imported (paths under python/). anyio's package __init__s parse
# themselves (inspect.getsource) to set up lazy imports; without the source anyio still works but imports every
# submodule at once. tests/integration/test_layer_build.py looks for others in the pinned packages.
SOURCES_NEEDED = ('anyio/__init__.py', 'anyio/abc/__init__.py')


def compile_layer(out: Path, keep_sources: set[str], sources_needed: tuple[str, ...] = SOURCES_NEEDED) -> list[Path]:
    """Compile everything under ``out``; return the ``.py`` files that did not compile (they are left as they were)."""
    failed: list[Path] = []
    for entry in sorted(out.iterdir()):
        lambda_path = f'{LAMBDA_ROOT}/{entry.name}'
        if entry.name in keep_sources:
            if not compileall.compile_dir(entry, quiet=1, ddir=lambda_path, workers=0, invalidation_mode=MODE):
                failed.extend(p for p in entry.rglob('*.py') if not Path(_cached(p)).is_file())
            continue
        if entry.is_dir():
            compileall.compile_dir(entry, quiet=1, ddir=lambda_path, workers=0, legacy=True, invalidation_mode=MODE)
            sources = sorted(entry.rglob('*.py'))
        elif entry.suffix == '.py':
            compileall.compile_file(entry, quiet=1, ddir=LAMBDA_ROOT, legacy=True, invalidation_mode=MODE)
            sources = [entry]
        else:
            continue
        for source in sources:
            legacy = source.with_suffix('.pyc')
            if source.relative_to(out).as_posix() in sources_needed:
                legacy.unlink(missing_ok=True)
                lambda_file = f'{LAMBDA_ROOT}/{source.relative_to(out).as_posix()}'
                py_compile.compile(str(source), _cached(source), lambda_file, doraise=False, invalidation_mode=MODE)
                if not Path(_cached(source)).is_file():
                    failed.append(source)
            elif legacy.is_file():
                source.unlink()
            else:
                failed.append(source)
    return failed


def _cached(source: Path) -> str:
    return importlib.util.cache_from_source(str(source))  # __pycache__/<name>.cpython-312.pyc under python3.12


def main(argv: list[str]) -> int:
    if len(argv) < 1:
        print('usage: bytecode.py <layer python/ folder> [entry that keeps its sources ...]', file=sys.stderr)
        return 2
    out = Path(argv[0])
    if sys.version_info[:2] != (3, 12):
        print(f'WARNING: {sys.executable} is not python3.12: {out} ships without bytecode (slower cold starts)', file=sys.stderr)
        return 0
    failed = compile_layer(out, set(argv[1:]))
    for source in failed:
        print(f'WARNING: {source} does not compile on python3.12; left as source', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
