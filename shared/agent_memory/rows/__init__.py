"""Typed rows that cross the repository boundary.

A leaf package: ``db/`` builds these from the SDK's rows, ``domain/`` reads them, and neither the SDK's ``RecordID``
nor a database dict reaches the domain. Ids are the strings the API uses (``entity:person/alice``,
``attribute:<id>``; sessions and turns by their bare id). Imports nothing from the rest of the service.
"""
