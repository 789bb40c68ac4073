"""Turning conversation turns into structured memory: stage 0 (deterministic) and the LLM stage."""
