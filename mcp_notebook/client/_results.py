"""The typed objects the client returns: tools, tool results, resources, prompts, completions.

Each keeps the server's dict in ``raw`` (nothing is lost, fields from newer spec revisions included)
and exposes the fields people use as attributes. Each renders in IPython (``_repr_html_`` or
``_repr_mimebundle_``) with every server string escaped, and as short text elsewhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from ..display import _html
from ..display import _pictures as _render
from ..protocol import _apps
from ..protocol._errors import McpError
from ..protocol._printable import printable
from ..protocol._secrets import NO_SECRETS, Secrets

__all__ = [
    "Completion",
    "Prompt",
    "PromptResult",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "Tool",
    "ToolResult",
]


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _short(text: str | None, limit: int = 80) -> str:
    if not text:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _require_str(raw: dict[str, Any], key: str, what: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise McpError("protocol", f"the server sent a {what} without a {key!r} string")
    return value


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the server offers. ``display_name`` follows the spec: title, annotations.title, name."""

    name: str
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: The tool's ``_meta`` ({} when absent): MCP Apps keep the View's resource and visibility here.
    meta: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Tool:
        output = raw.get("outputSchema")
        return cls(
            name=_require_str(raw, "name", "tool"),
            title=_str_or_none(raw.get("title")),
            description=_str_or_none(raw.get("description")),
            input_schema=_dict(raw.get("inputSchema")),
            output_schema=output if isinstance(output, dict) else None,
            annotations=_dict(raw.get("annotations")),
            raw=raw,
            meta=_dict(raw.get("_meta")),
        )

    @property
    def ui_resource_uri(self) -> str | None:
        """The ``ui://`` resource of the tool's MCP App View, or None (see mcp_notebook.apps)."""
        return _apps.ui_resource_uri(self.meta)

    @property
    def visibility(self) -> tuple[str, ...]:
        """Who may use the tool: "model" (listed for the model and the user), "app" (its Views)."""
        return _apps.tool_visibility(self.meta)

    @property
    def app_only(self) -> bool:
        """A tool only an app's View may call: hidden from tool lists unless asked for."""
        return not _apps.visible_to_model(self.meta)

    @property
    def display_name(self) -> str:
        return self.title or _str_or_none(self.annotations.get("title")) or self.name

    @property
    def parameters(self) -> list[str]:
        props = self.input_schema.get("properties")
        return list(props) if isinstance(props, dict) else []

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, parameters={self.parameters!r})"

    def _repr_html_(self) -> str:
        required = set(self.input_schema.get("required") or [])
        props = _dict(self.input_schema.get("properties"))
        params = "".join(
            f"<li><code>{_html.escape(name)}</code>{'*' if name in required else ''}"
            f" <small>{_html.escape(_dict(spec).get('type', ''))}</small>"
            f" {_html.escape(_short(_str_or_none(_dict(spec).get('description')), 120))}</li>"
            for name, spec in props.items()
        )
        return (
            f"<div><b>{_html.escape(self.display_name)}</b> <code>{_html.escape(self.name)}</code>"
            f"<div>{_html.escape(self.description or '')}</div><ul>{params}</ul></div>"
        )


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returned. ``is_error`` is the tool's own report of failure (not an exception).

    Its text forms (``text``, the repr, the pictures) show the connection's secrets (``env``,
    headers, a token) as ``***`` should the server echo one; the data (``raw``, ``content``,
    ``structured_content``, ``data``, ``to_dataframe()``) stays exactly the server's.
    """

    content: list[dict[str, Any]]
    structured_content: Any = None
    is_error: bool = False
    meta: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: The tool's outputSchema as the client knew it when the call returned (for typed DataFrames).
    output_schema: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    #: The connection's secrets, masked in the text forms (see protocol/_secrets).
    _secrets: Secrets = field(default=NO_SECRETS, repr=False, compare=False)

    @classmethod
    def from_dict(
        cls,
        raw: dict[str, Any],
        *,
        output_schema: dict[str, Any] | None = None,
        secrets: Secrets = NO_SECRETS,
    ) -> ToolResult:
        content = raw.get("content")
        if content is None:
            content = []
        if not isinstance(content, list):
            raise McpError("protocol", "the server sent a tool result whose 'content' is not a list")
        # The server's own list, not a copy per call (the hot path), unless a block is no object.
        blocks: list[Any] = content
        for block in content:
            if not isinstance(block, dict):
                blocks = [b if isinstance(b, dict) else {"type": "unknown", "value": b} for b in content]
                break
        meta = raw.get("_meta")
        return cls(
            content=blocks,
            structured_content=raw.get("structuredContent"),
            is_error=raw.get("isError") is True,
            meta=meta if isinstance(meta, dict) else None,
            raw=raw,
            output_schema=output_schema,
            _secrets=secrets,
        )

    @property
    def text(self) -> str:
        """The text blocks joined by newlines (empty when there are none), secrets masked."""
        return self._secrets.mask(self._text())

    def _text(self) -> str:
        return "\n".join(str(b.get("text", "")) for b in self.content if b.get("type") == "text")

    def _masked(self) -> ToolResult:
        """This result with its content and structured content masked, for a picture of it (the
        explorer's view; ``raw`` stays the server's). Itself when there are no secrets."""
        if not self._secrets:
            return self
        return replace(
            self,
            content=self._secrets.mask_value(self.content),
            structured_content=self._secrets.mask_value(self.structured_content),
        )

    @property
    def data(self) -> Any:
        """``structured_content`` if present, else the text parsed as JSON, else the text."""
        if self.structured_content is not None:
            return self.structured_content
        text = self._text()
        try:
            return json.loads(text)
        except ValueError:
            return text

    def to_dataframe(self, *, output_schema: dict[str, Any] | None = None, flatten: bool = True) -> Any:
        """This result as a pandas DataFrame (mapping rules: :mod:`mcp_notebook.display._dataframes`).

        Column dtypes come from ``output_schema``, by default the tool's own. Needs the notebook
        extra; pandas is imported only when this is called.
        """
        # The notebook layer owns the mapping; importing it here, on demand, keeps the core free of
        # pandas at import time while giving results the method users look for.
        from ..display._dataframes import result_to_dataframe

        schema = output_schema if output_schema is not None else self.output_schema
        return result_to_dataframe(
            self.structured_content,
            self.content,
            is_error=self.is_error,
            output_schema=schema,
            flatten=flatten,
        )

    def __repr__(self) -> str:
        kinds = ", ".join(printable(b.get("type")) for b in self.content)
        flag = ", is_error=True" if self.is_error else ""
        structured = ", structured" if self.structured_content is not None else ""
        return self._secrets.mask(f"ToolResult([{kinds}]{structured}{flag}): {_short(self.text, 60)!r}")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """A table when the result holds one (its first rows and its size), else its blocks; the same
        picture as the explorer's, bounded whatever the server sent
        (:mod:`mcp_notebook.display._pictures`), secrets masked."""
        shown = self._masked()
        return {
            "text/plain": _render.result_text(shown.structured_content, shown.content, self.is_error),
            # plain str, never markupsafe's Markup: marimo cannot serialise a str subclass (#38)
            "text/html": str(_render.result_html(shown.structured_content, shown.content, self.is_error)),
        }


@dataclass(frozen=True, slots=True)
class Resource:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Resource:
        size = raw.get("size")
        return cls(
            uri=_require_str(raw, "uri", "resource"),
            name=_str_or_none(raw.get("name")) or str(raw.get("uri")),
            title=_str_or_none(raw.get("title")),
            description=_str_or_none(raw.get("description")),
            mime_type=_str_or_none(raw.get("mimeType")),
            size=size if isinstance(size, int) and not isinstance(size, bool) else None,
            raw=raw,
        )

    def _repr_html_(self) -> str:
        return (
            f"<div><b>{_html.escape(self.title or self.name)}</b> {_html.link(self.uri)}"
            f" <small>{_html.escape(self.mime_type or '')}</small></div>"
        )


@dataclass(frozen=True, slots=True)
class ResourceTemplate:
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def _repr_html_(self) -> str:
        return str(  # a plain str (see ToolResult._repr_mimebundle_)
            _html.Markup("<div><b>{}</b> <code>{}</code> <small>{}</small> {}</div>").format(
                self.title or self.name, self.uri_template, self.mime_type or "", self.description or ""
            )
        )

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ResourceTemplate:
        return cls(
            uri_template=_require_str(raw, "uriTemplate", "resource template"),
            name=_str_or_none(raw.get("name")) or str(raw.get("uriTemplate")),
            title=_str_or_none(raw.get("title")),
            description=_str_or_none(raw.get("description")),
            mime_type=_str_or_none(raw.get("mimeType")),
            raw=raw,
        )


@dataclass(frozen=True, slots=True)
class ResourceContents:
    """The result of ``read_resource``: one or more contents (text or base64 ``blob``).

    Its text forms mask the connection's secrets, as :class:`ToolResult`'s do; the data stays.
    """

    contents: list[dict[str, Any]]
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    _secrets: Secrets = field(default=NO_SECRETS, repr=False, compare=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, secrets: Secrets = NO_SECRETS) -> ResourceContents:
        contents = raw.get("contents")
        if not isinstance(contents, list):
            raise McpError("protocol", "the server sent a resource without a 'contents' list")
        return cls(contents=[c for c in contents if isinstance(c, dict)], raw=raw, _secrets=secrets)

    @property
    def text(self) -> str:
        """The text contents joined by newlines, secrets masked."""
        return self._secrets.mask("\n".join(str(c["text"]) for c in self.contents if "text" in c))

    def _masked(self) -> ResourceContents:
        """These contents masked, for a picture of them (``raw`` stays the server's)."""
        return replace(self, contents=self._secrets.mask_value(self.contents)) if self._secrets else self

    def to_dataframe(self, *, flatten: bool = True) -> Any:
        """These contents as a pandas DataFrame: a JSON or CSV text as its table, anything else one
        row per content (rules: :func:`mcp_notebook.display._dataframes.resource_to_dataframe`)."""
        from ..display._dataframes import resource_to_dataframe

        return resource_to_dataframe(self.contents, flatten=flatten)

    def __repr__(self) -> str:
        uris = ", ".join(printable(c.get("uri")) for c in self.contents)
        return self._secrets.mask(f"ResourceContents([{uris}]): {_short(self.text, 60)!r}")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """A JSON, CSV or TSV text as its table (first rows and size), anything else as it is."""
        shown = self._masked().contents
        return {
            "text/plain": _render.contents_text(shown),
            "text/html": str(_render.contents_html(shown)),  # a plain str (see ToolResult's)
        }


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Prompt:
        arguments = raw.get("arguments")
        return cls(
            name=_require_str(raw, "name", "prompt"),
            title=_str_or_none(raw.get("title")),
            description=_str_or_none(raw.get("description")),
            arguments=[a for a in arguments if isinstance(a, dict)] if isinstance(arguments, list) else [],
            raw=raw,
        )

    @property
    def argument_names(self) -> list[str]:
        return [str(a.get("name")) for a in self.arguments]

    def _repr_html_(self) -> str:
        arguments = "".join(
            f"<li><code>{_html.escape(a.get('name', ''))}</code>{'*' if a.get('required') else ''}"
            f" {_html.escape(a.get('description') or '')}</li>"
            for a in self.arguments
        )
        return (
            f"<div><b>{_html.escape(self.title or self.name)}</b> <code>{_html.escape(self.name)}</code>"
            f"<div>{_html.escape(self.description or '')}</div><ul>{arguments}</ul></div>"
        )

    def __repr__(self) -> str:
        return f"Prompt({self.name!r}, arguments={self.argument_names!r})"


@dataclass(frozen=True, slots=True)
class PromptResult:
    """What ``get_prompt`` returned. Its text forms mask the connection's secrets, as
    :class:`ToolResult`'s do; ``messages`` and ``raw`` stay the server's."""

    messages: list[dict[str, Any]]
    description: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    _secrets: Secrets = field(default=NO_SECRETS, repr=False, compare=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, secrets: Secrets = NO_SECRETS) -> PromptResult:
        messages = raw.get("messages")
        if not isinstance(messages, list):
            raise McpError("protocol", "the server sent a prompt without a 'messages' list")
        return cls(
            messages=[m for m in messages if isinstance(m, dict)],
            description=_str_or_none(raw.get("description")),
            raw=raw,
            _secrets=secrets,
        )

    def _masked(self) -> PromptResult:
        """These messages masked, for a picture of them (``raw`` stays the server's)."""
        if not self._secrets:
            return self
        description = self._secrets.mask(self.description) if self.description else self.description
        return replace(self, messages=self._secrets.mask_value(self.messages), description=description)

    @property
    def text(self) -> str:
        lines = []
        for message in self.messages:
            content = _dict(message.get("content"))
            if content.get("type") == "text":
                lines.append(f"{message.get('role')}: {content.get('text')}")
        return self._secrets.mask("\n".join(lines))

    def __repr__(self) -> str:
        return self._secrets.mask(f"PromptResult({len(self.messages)} messages): {_short(self.text, 60)!r}")

    def _repr_html_(self) -> str:
        rows = [
            (
                _html.escape(m.get("role", "")),
                _html.content_block_html(m.get("content"), remote_images=_render.options.remote_images),
            )
            for m in self._masked().messages
        ]
        return str(_html.table(rows))  # a plain str (see ToolResult._repr_mimebundle_)


@dataclass(frozen=True, slots=True)
class Completion:
    values: list[str]
    total: int | None = None
    has_more: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Completion:
        completion = _dict(raw.get("completion"))
        values = completion.get("values")
        total = completion.get("total")
        return cls(
            values=[v for v in values if isinstance(v, str)] if isinstance(values, list) else [],
            total=total if isinstance(total, int) and not isinstance(total, bool) else None,
            has_more=completion.get("hasMore") is True,
            raw=raw,
        )
