"""Citation resolution: the markers a reply keeps are exactly those that name a source it was given."""

from __future__ import annotations

from agent_memory.domain.retrieval import Hit
from agent_memory.domain.synthesis import citation_wire, resolve_citations
from agent_memory.rows.traces import public_citation


def _hit(n: int) -> Hit:
    return Hit(f'attribute:a{n}', 'attribute', 0.5, f'fact {n}', None, {}, None, (f'person/p{n}',), key=f'a{n}')


SOURCES = [_hit(1), _hit(2), _hit(3)]


def test_markers_naming_given_sources_are_kept_in_order_of_first_use() -> None:
    # Given a reply citing S2 then S1 then S2 again
    reply, cited = resolve_citations('Bob is 30 [S2]. He lives in Oslo [S1] and works there [S2].', SOURCES)
    # Then both stay in the text and each source is cited once, in the order first used
    assert reply == 'Bob is 30 [S2]. He lives in Oslo [S1] and works there [S2].'
    assert [(marker, hit.id) for marker, hit in cited] == [('[S2]', 'attribute:a2'), ('[S1]', 'attribute:a1')]


def test_markers_naming_no_given_source_are_stripped_with_their_space() -> None:
    # Given a reply inventing S0 and S4 next to a real S3
    reply, cited = resolve_citations('Alice moved [S0]. She likes tea [S3], not coffee [S4].', SOURCES)
    # Then the invented markers vanish (no dangling space before punctuation) and only S3 is cited
    assert reply == 'Alice moved. She likes tea [S3], not coffee.'
    assert [hit.id for _, hit in cited] == ['attribute:a3']


def test_a_reply_without_sources_cites_nothing() -> None:
    # Given a reply with a marker but no sources, When its citations are resolved, Then the marker is stripped and nothing is cited
    reply, cited = resolve_citations('I do not know [S1].', [])
    assert (reply, cited) == ('I do not know.', [])


def test_the_stored_citation_keeps_what_cache_validity_needs_and_the_wire_form_drops_it() -> None:
    # Given a citation as /chat stores it on the response trace
    hit = SOURCES[0]
    stored = citation_wire('[S1]', hit) | {'table': hit.table, 'key': hit.key, 'entity_refs': list(hit.entity_refs)}
    # Then the client sees the marker, id and snippet but not the table, key or entity refs
    public = public_citation(stored)
    assert public['marker'] == '[S1]' and public['id'] == 'attribute:a1' and public['snippet'] == 'fact 1'
    assert not {'table', 'key', 'entity_refs'} & set(public)
