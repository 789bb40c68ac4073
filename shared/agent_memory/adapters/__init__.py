"""Adapters to outside services that the composition root builds and hands to the domain through its ports."""
