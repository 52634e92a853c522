"""Protocol versions and the two eras (PROTOCOL.md §1).

Modern (2026-07-28 and later) versions travel in every request's ``_meta``; legacy ones are agreed
once by the ``initialize`` handshake. This module is the only place that knows which is which.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "LATEST_MODERN_VERSION",
    "MODERN_VERSIONS",
    "SUPPORTED_VERSIONS",
    "Era",
    "era_of",
    "pick_mutual_modern",
]

Era = Literal["modern", "legacy"]

#: Modern versions we speak, newest first.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
#: Handshake versions we speak, newest first.
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SUPPORTED_VERSIONS: tuple[str, ...] = MODERN_VERSIONS + HANDSHAKE_VERSIONS
LATEST_MODERN_VERSION = MODERN_VERSIONS[0]
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[0]


def era_of(version: str) -> Era | None:
    """The era a version we speak belongs to, or None for a version we do not speak."""
    if version in MODERN_VERSIONS:
        return "modern"
    if version in HANDSHAKE_VERSIONS:
        return "legacy"
    return None


def pick_mutual_modern(offered: object) -> str | None:
    """Our newest modern version among those a server listed, or None if there is none."""
    if not isinstance(offered, list):
        return None
    names = {v for v in offered if isinstance(v, str)}
    for version in MODERN_VERSIONS:
        if version in names:
            return version
    return None
