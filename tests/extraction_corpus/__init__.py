"""The labelled stage-0 extraction corpus and its comparison rule (see README.md)."""
