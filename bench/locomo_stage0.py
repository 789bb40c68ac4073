"""Stage 0 over real conversation (LoCoMo dev split): what it would store, with no database and no model.

Every turn is read the way ``POST /facts/batch`` with a named speaker reads it (``name`` = the LoCoMo speaker, ``ts`` =
the session's date, the session's previous turns as context), then first person is bound to the speaker. Printed:
instructions per conversation (LoCoMo is two humans chatting: the target is 0), attributes per conversation, and
a sample of attributes; with ``--labels`` the precision of stage 0 against the hand labels in
``tests/extraction_corpus/locomo_labels.json`` (conversation, turn id, entity, key, value, label; no turn text): over
every stored attribute, and over a seeded random sample of ``SAMPLE_SIZE`` of them (the issue's measure).

LoCoMo is CC BY-NC 4.0, evaluation only: it is read from ``../shared/data/locomo/`` beside the repository (or
``--data``) and never copied here. All five dev conversations have been looked at while tuning (0–2 first, then 3–4);
the held-out conversations 5–9 are the blind check.

Run: ``PYTHONPATH=shared:infra:. .venv/bin/python bench/locomo_stage0.py [--conversations 0,1,2,3,4] [--labels] [--show 40]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / 'shared')]

from agent_memory.extraction.deterministic import extract  # noqa: E402
from agent_memory.extraction.model import Extraction, ExtractionContext, PriorTurn  # noqa: E402
from agent_memory.extraction.speaker import bind_first_person  # noqa: E402

DATA_CANDIDATES = (ROOT.parent / 'shared/data/locomo/locomo-dev.json', ROOT.parents[1] / 'shared/data/locomo/locomo-dev.json')
LABELS = ROOT / 'tests/extraction_corpus/locomo_labels.json'
RECENT = 6
SAMPLE_SIZE, SAMPLE_SEED = 100, 11


@dataclass(frozen=True)
class LocomoTurn:
    conversation: int
    dia_id: str
    speaker: str
    text: str
    observed_at: dt.datetime
    recent: tuple[PriorTurn, ...]


def load(path: Path) -> list[dict[str, object]]:
    data = json.loads(path.read_text(encoding='utf-8'))
    assert isinstance(data, list)
    return data


def spoken_time(raw: str) -> dt.datetime:
    """ "1:56 pm on 8 May, 2023" → an aware datetime (UTC: LoCoMo gives no zone)."""
    return dt.datetime.strptime(raw, '%I:%M %p on %d %B, %Y').replace(tzinfo=dt.UTC)


def turns(data: list[dict[str, object]], conversations: list[int]) -> Iterator[LocomoTurn]:
    for index in conversations:
        conversation = data[index]['conversation']
        assert isinstance(conversation, dict)
        sessions = sorted((int(k.split('_')[1]), k) for k in conversation if k.startswith('session_') and k.count('_') == 1)
        for _, key in sessions:
            observed = spoken_time(conversation[f'{key}_date_time'])
            history: list[PriorTurn] = []
            for turn in conversation[key]:
                said = f'{turn["speaker"]}: {turn["text"]}'  # as bench/locomo.py sends it: the transcript's label, and the name
                yield LocomoTurn(index, turn['dia_id'], turn['speaker'], said, observed, tuple(history[-RECENT:]))
                history.append(PriorTurn(role='user', content=said, observed_at=observed, speaker=turn['speaker']))


def read(turn: LocomoTurn) -> Extraction:
    ctx = ExtractionContext(role='user', observed_at=turn.observed_at, speaker=turn.speaker, recent_turns=turn.recent)
    return bind_first_person(extract(turn.text, ctx), turn.speaker)


Stored = tuple[int, str, str, str, str]  # conversation, dia_id, entity name, key, value


def stored_attributes(data: list[dict[str, object]], conversations: list[int]) -> tuple[list[Stored], dict[int, list[str]]]:
    attributes: list[Stored] = []
    instructions: dict[int, list[str]] = {i: [] for i in conversations}
    for turn in turns(data, conversations):
        extraction = read(turn)
        instructions[turn.conversation] += [f'{turn.dia_id}: {i.description}' for i in extraction.instructions]
        attributes += [(turn.conversation, turn.dia_id, a.entity.name, a.key, a.value) for a in extraction.attributes]
    return attributes, instructions


def seeded_sample(attributes: list[Stored], size: int = SAMPLE_SIZE, seed: int = SAMPLE_SEED) -> list[Stored]:
    """The same random sample for the same stored attributes, whatever order they were produced in."""
    ordered = sorted(set(attributes))
    return random.Random(seed).sample(ordered, min(size, len(ordered)))


def precision_against_labels(attributes: list[Stored]) -> tuple[int, int, int, list[Stored]]:
    """(correct, wrong, unlabelled, wrong items) among the stored attributes of the labelled conversations."""
    labels = {(x['conversation'], x['turn'], x['entity'], x['key'], x['value']): x['label'] for x in json.loads(LABELS.read_text())}
    conversations = {key[0] for key in labels}
    produced = [a for a in attributes if a[0] in conversations]
    judged = [(a, labels.get(a)) for a in produced]
    correct = sum(1 for _, label in judged if label == 'correct')
    wrong = [a for a, label in judged if label == 'wrong']
    unlabelled = sum(1 for _, label in judged if label is None)
    return correct, len(wrong), unlabelled, wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--data', type=Path, default=next((p for p in DATA_CANDIDATES if p.exists()), DATA_CANDIDATES[0]))
    parser.add_argument('--conversations', default='0,1,2,3,4', help='indexes into the dev split')
    parser.add_argument('--show', type=int, default=40, help='attributes to print (a seeded random sample)')
    parser.add_argument('--labels', action='store_true', help='report precision against the labelled sample')
    args = parser.parse_args()
    conversations = [int(c) for c in args.conversations.split(',')]
    attributes, instructions = stored_attributes(load(args.data), conversations)
    for index in conversations:
        mine = [a for a in attributes if a[0] == index]
        print(f'conversation {index}: {len(instructions[index])} instructions, {len(mine)} attributes')
        for line in instructions[index]:
            print(f'  instruction {line}')
    for conversation, dia_id, entity, key, value in random.Random(7).sample(attributes, min(args.show, len(attributes))):
        print(f'  [{conversation} {dia_id}] {entity} {key}: {value}')
    if args.labels:
        report_labels('every stored attribute', attributes)
        report_labels(f'seeded sample ({SAMPLE_SIZE}, seed {SAMPLE_SEED})', seeded_sample(attributes))


def report_labels(title: str, attributes: list[Stored]) -> None:
    correct, wrong, unlabelled, wrong_items = precision_against_labels(attributes)
    judged = correct + wrong
    print(f'\n{title}: {correct}/{judged} labelled attributes correct = {correct / max(1, judged):.3f}; not labelled: {unlabelled}')
    for item in wrong_items:
        print(f'  wrong: {item}')


if __name__ == '__main__':
    main()
