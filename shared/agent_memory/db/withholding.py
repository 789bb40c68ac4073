"""Forgetting reaches what was derived from a forgotten value (CONTRACT §3: a derived row is no more than its sources):
the answers that cited or read it, and the reply turns /chat stored with them."""

from __future__ import annotations

WITHHELD = '(withheld: this reply was built from memory that has since been forgotten)'


def withholding(gone: str, refs: str) -> str:
    """Statements (inside a forgetting transaction) that take the forgotten value out of what was derived from it: every
    answer that cited or read one of the record ids in ``gone`` (or cited an entity in ``refs``) keeps its trace but
    loses its texts and can no longer be served from the cache, and the reply turn /chat stored with it is withheld too."""
    return f"""
            LET $gone_ids = array::map(array::distinct({gone}), |$r| <string> $r);
            LET $derived = (SELECT VALUE id FROM response_trace WHERE cited.id ANYINSIDE $gone_ids
                OR array::map(read_sources, |$s| string::concat($s.table, ':', <string> $s.key)) ANYINSIDE $gone_ids
                OR cited_entity_refs ANYINSIDE {refs});
            UPDATE $derived SET reply = $withheld, cited = array::map(cited, |$c| object::extend($c, {{ snippet: '' }})),
                cache_eligible = false RETURN NONE;
            UPDATE retrieval_trace SET cache_eligible = false, question_key = NONE WHERE response IN $derived RETURN NONE;
            LET $said = (SELECT session, created_at FROM $derived WHERE session IS NOT NONE);
            FOR $r IN $said {{
                UPDATE turn SET content = $withheld WHERE session = $r.session AND created_at = $r.created_at
                    AND origin = 'chat_reply' RETURN NONE;
            }};"""
