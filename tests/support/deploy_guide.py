"""The commands docs/deploy.md tells an operator to run, read from the guide itself so the tests run what it says."""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / 'docs' / 'deploy.md'
PASSWORD_PLACEHOLDER = 'PASTE-DB_PASSWORD-HERE'


def guide() -> str:
    return GUIDE.read_text(encoding='utf-8')


def database_user_surql(password: str) -> str:
    """Section 3's SurrealQL (namespace + least-privilege user), with ``password`` in place of the placeholder."""
    (block,) = [b for b in re.findall(r'```surql\n(.*?)```', guide(), re.DOTALL) if 'DEFINE USER' in b]
    assert PASSWORD_PLACEHOLDER in block
    return block.replace(PASSWORD_PLACEHOLDER, password)


def secret_json_format() -> str:
    """Section 4's ``printf`` format of the secret's JSON (``%s`` where the generated values go)."""
    (fmt,) = re.findall(r"SECRET_JSON=\$\(printf '([^']+)'", guide())
    return fmt


def parameter_rows() -> dict[str, str]:
    """The "Parameters" table: parameter name -> its default column."""
    section = guide().split('### Parameters', 1)[1].split('\n## ', 1)[0]
    rows = re.findall(r'^\| `(\w+)` \| ([^|]+) \|', section, re.MULTILINE)
    return {name: default.strip() for name, default in rows}
