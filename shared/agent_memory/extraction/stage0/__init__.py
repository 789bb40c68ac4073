"""Building blocks of the deterministic (stage 0) extractor; the entry point is ``extraction.deterministic.extract``."""
