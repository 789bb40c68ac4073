"""Agent Memory: the domain package shipped as the shared Lambda layer."""

__version__ = '0.1.0'
