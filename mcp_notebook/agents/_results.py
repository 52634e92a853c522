"""What a model is shown of a tool result, the same for every framework.

Frameworks hand a model text (some also structured data or images); what the text says must not
depend on the adapter. The text forms here mask the connection's secrets as the result's own
``text`` does: a model's transcript, a framework's trace and its logs are as public as a saved
notebook.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from ..client._results import ToolResult

__all__ = ["Image", "images", "model_text", "structured"]


@dataclass(frozen=True)
class Image:
    """An image block of a result, decoded: for frameworks that pass images to the model."""

    data: bytes
    mime_type: str


def model_text(result: ToolResult) -> str:
    """The result as the model reads it: its text blocks; the structured value as JSON when the
    server sent no text; a line naming each image or resource block the text leaves out."""
    shown = result._masked()
    parts: list[str] = []
    for index, block in enumerate(shown.content, 1):
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(block.get("data", ""))) * 3 // 4
            parts.append(f"[{kind} {index}: {block.get('mimeType', 'unknown type')}, about {size} bytes]")
        elif kind == "resource":
            resource = block.get("resource") or {}
            text = resource.get("text") if isinstance(resource, dict) else None
            parts.append(str(text) if text is not None else f"[resource {resource.get('uri', '')}]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.get('uri', '')}]")
    has_text = any(block.get("type") == "text" for block in shown.content)
    if not has_text and shown.structured_content is not None:
        parts.insert(0, json.dumps(shown.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts)


def structured(result: ToolResult) -> Any:
    """The structured value (secrets masked), or None."""
    return result._masked().structured_content


def images(result: ToolResult) -> list[Image]:
    """The result's image blocks, decoded; a block whose data is not base64 is left out."""
    found = []
    for block in result.content:
        if block.get("type") != "image":
            continue
        try:
            data = base64.b64decode(str(block.get("data", "")), validate=True)
        except (binascii.Error, ValueError):
            continue
        found.append(Image(data, str(block.get("mimeType") or "application/octet-stream")))
    return found
