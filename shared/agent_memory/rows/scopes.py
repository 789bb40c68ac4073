"""A row's visibility: a disjunction of scope sets, each a conjunction of scope patterns (CONTRACT §5)."""

ScopeSets = list[list[str]]
