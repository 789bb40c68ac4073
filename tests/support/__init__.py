"""Helpers shared by test modules (servers, bridges, snapshots). Test modules import from here, never from each other."""
