"""Read the HTTP API routes and schedules that template.yaml declares."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class _CfnLoader(yaml.SafeLoader):
    """A YAML loader that keeps CloudFormation short-form tags (!Ref, !Sub, …) as plain values."""


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)  # type: ignore[arg-type]


_CfnLoader.add_multi_constructor('!', _tag)


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # as declared, e.g. /api/v1/{context_id}/facts
    function: str  # logical id
    code_dir: Path
    pattern: re.Pattern[str]

    def match(self, method: str, path: str) -> dict[str, str] | None:
        if method != self.method:
            return None
        found = self.pattern.fullmatch(path)
        return found.groupdict() if found else None


@dataclass(frozen=True)
class Schedule:
    function: str
    code_dir: Path
    expression: str


def load_template(path: Path) -> dict[str, Any]:
    with path.open(encoding='utf-8') as handle:
        loaded: dict[str, Any] = yaml.load(handle, Loader=_CfnLoader)  # SafeLoader subclass
    return loaded


class CfnLongFormLoader(yaml.SafeLoader):
    """SafeLoader that turns CloudFormation short-form tags into their long form (``!Ref X`` -> ``{'Ref': 'X'}``)."""


def _long_form(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    if suffix == 'GetAtt' and isinstance(value, str):
        value = value.split('.', 1)
    return {suffix if suffix in ('Ref', 'Condition') else f'Fn::{suffix}': value}


CfnLongFormLoader.add_multi_constructor('!', _long_form)


def load_template_long_form(path: Path) -> dict[str, Any]:
    """The template with intrinsic functions kept as CloudFormation's long form (for checks on Ref/GetAtt)."""
    loaded: dict[str, Any] = yaml.load(path.read_text(encoding='utf-8'), Loader=CfnLongFormLoader)  # SafeLoader subclass
    return loaded


def _functions(template: dict[str, Any], root: Path) -> list[tuple[str, Path, dict[str, Any]]]:
    found = []
    for logical_id, resource in (template.get('Resources') or {}).items():
        if resource.get('Type') == 'AWS::Serverless::Function':
            props = resource.get('Properties') or {}
            found.append((logical_id, (root / props['CodeUri']).resolve(), props.get('Events') or {}))
    return found


def _compile(path: str) -> re.Pattern[str]:
    regex = re.sub(r'\\\{(\w+)\\\}', r'(?P<\1>[^/]+)', re.escape(path))
    return re.compile(regex)


def http_routes(template: dict[str, Any], root: Path) -> list[Route]:
    routes = []
    for logical_id, code_dir, events in _functions(template, root):
        for event in events.values():
            if event.get('Type') == 'HttpApi':
                props = event['Properties']
                routes.append(Route(props['Method'].upper(), props['Path'], logical_id, code_dir, _compile(props['Path'])))
    # literal segments beat parameters when two routes could match the same path
    return sorted(routes, key=lambda r: (r.path.count('{'), -len(r.path)))


def schedules(template: dict[str, Any], root: Path) -> list[Schedule]:
    parameters = template.get('Parameters') or {}
    found = []
    for logical_id, code_dir, events in _functions(template, root):
        for event in events.values():
            if event.get('Type') in ('Schedule', 'ScheduleV2'):
                expression = event['Properties']['ScheduleExpression']
                ref = expression.get('Ref') if isinstance(expression, dict) else expression  # !Ref X: 'X' or {'Ref': 'X'}
                if ref in parameters:  # a template parameter (HourlySweepSchedule, …): run on its default
                    expression = parameters[ref]['Default']
                found.append(Schedule(logical_id, code_dir, expression))
    return found


def sqs_worker_dir(template: dict[str, Any], root: Path) -> Path:
    """The code folder of the function the template wires to the extraction queue."""
    for _, code_dir, events in _functions(template, root):
        if any(event.get('Type') == 'SQS' for event in events.values()):
            return code_dir
    raise ValueError('template.yaml has no SQS-triggered function')
