"""Distinct template questions for the cache-lookup bench (bench/cache.py part 2), and their real embeddings.

Each stored trace of the lookup bench carries the local model's embedding of its own question, as /chat would store it.
The embeddings are cached on disk (``bench_vectors``); fill the cache once, under ``nice -n 10``:
``PYTHONPATH=shared:infra:.:bench nice -n 10 .venv/bin/python bench/trace_questions.py 100000``.
"""

from __future__ import annotations

import itertools
import random
import sys
from typing import Any

import numpy as np

VERSION = 1
PEOPLE = ['Alice', 'Bob', 'Priya', 'Daniel', 'Marco', 'Yuki', 'Fatima', 'Chen', 'Olga', 'Kwame', 'Sofia', 'Liam', 'Aisha', 'Mateo',
          'Hannah', 'Ravi', 'Elena', 'Tomás', 'Ingrid', 'Kenji', 'Zara', 'Noah', 'Leila', 'Oscar', 'Mei', 'Jonas', 'Amara', 'Luca',
          'my sister', 'my brother', 'my manager', 'the new intern', 'my landlord', 'my dentist', 'our CFO', 'the team lead',
          'my neighbour', 'my mother', 'my father', 'my partner', 'my accountant', 'my coach', 'the recruiter', 'my cousin',
          'my best friend', 'the client', 'our designer', 'the plumber', 'my doctor', 'my tutor']  # fmt: skip
THINGS = ['phone number', 'email address', 'home address', 'favourite food', 'birthday', 'car', 'team', 'project deadline',
          'next meeting', 'flight time', 'hotel booking', 'gym schedule', 'doctor appointment', 'salary review', 'anniversary',
          'shoe size', 'bank', 'insurance plan', 'time zone', 'preferred editor', 'dietary restriction', 'allergy',
          'office location', 'start date', 'job title', 'favourite band', 'pet', 'passport expiry', 'laptop model',
          'coffee order', 'wedding date', 'vacation plans', 'home town', 'favourite book', 'running route', 'parking spot',
          'wifi password hint', 'budget limit', 'rent', 'school', 'hobby', 'blood type', 'licence plate', 'train pass',
          'reading list', 'meal plan', 'moving date', 'newsletter', 'github handle', 'shift pattern']  # fmt: skip
STEMS = ["what's {p}'s {t}?", "when did {p} last change their {t}?", "can you tell me about {p}'s {t}?", 'did {p} mention a {t}?',
         "do you remember {p}'s {t}?", "has {p}'s {t} changed recently?", "where did I note {p}'s {t}?", "remind me of {p}'s {t}",
         "what did {p} say about their {t}?", "is {p}'s {t} still the same?", "who told me {p}'s {t}?", 'does {p} have a new {t}?',
         "how do I find {p}'s {t}?", "what was {p}'s old {t}?", "why did {p} change their {t}?", "should I ask {p} about their {t}?",
         "when is {p}'s {t} due?", "could you look up {p}'s {t}?", "have I saved {p}'s {t}?", "what do we know about {p}'s {t}?",
         "tell me {p}'s {t} again", "did I ever write down {p}'s {t}?", "is there an update on {p}'s {t}?",
         "what is the latest on {p}'s {t}?", "can you check {p}'s {t} for me?", "do I have {p}'s {t} somewhere?",
         "which {t} does {p} use?", "how often does {p} change their {t}?", "what's the story with {p}'s {t}?",
         "did {p} share their {t} with me?", "what is {p}'s current {t}?", "what was {p}'s {t} last year?",
         "any notes on {p}'s {t}?", "give me {p}'s {t}", "look up {p}'s {t}", "find {p}'s {t}", "I need {p}'s {t}",
         "where can I see {p}'s {t}?", "what changed about {p}'s {t}?", "is {p}'s {t} written down?",
         "what have I heard about {p}'s {t}?", "remind me what {p}'s {t} is"]  # fmt: skip


def questions(count: int, seed: int) -> list[str]:
    """``count`` distinct questions (at most len(STEMS) × len(PEOPLE) × len(THINGS) = 105,000), in a seeded order."""
    combos = sorted({stem.format(p=p, t=t) for stem, p, t in itertools.product(STEMS, PEOPLE, THINGS)})
    if count > len(combos):
        raise ValueError(f'{count:,} questions asked, {len(combos):,} distinct ones exist')
    random.Random(seed).shuffle(combos)
    return combos[:count]


def question_vectors(embedder: Any, texts: list[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
    from bench_vectors import cached_vectors

    return cached_vectors(embedder, 'trace-questions', VERSION, texts)


if __name__ == '__main__':
    import bench_env  # noqa: F401  # paths and environment before the service imports

    from agent_memory.composition import get_services

    texts = questions(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 20261130)
    services = get_services()
    print(question_vectors(services.embedder, texts).shape)
