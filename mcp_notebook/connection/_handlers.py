"""Server-to-client requests: sampling, elicitation and roots, in both eras.

A legacy server sends these as JSON-RPC requests; a modern one returns ``input_required`` with
``inputRequests``. Both arrive here as ``(method, params)`` and leave as a result dict, so the user
writes one handler for both eras. A handler may be sync (run in a worker thread, so ``input()`` or a
blocking dialog does not freeze the connection) or async, and may return the spec's dict or a
convenient shorthand (see :func:`normalize_result`).
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ..protocol._apps import UI_EXTENSION
from ..protocol._apps import extension_settings as ui_extension_settings
from ..protocol._envelope import client_capabilities
from ..protocol._errors import McpError
from ..protocol._task_shapes import TASKS_EXTENSION
from ..protocol._versions import Era
from ._model_sampling import SamplingModel, model_sampler

__all__ = ["SERVER_REQUEST_METHODS", "ClientHandlers", "Handler", "normalize_result"]

logger = logging.getLogger("mcp_notebook.connection")

#: A handler takes the request's params and returns its result.
Handler = Callable[[dict[str, Any]], Any]

SAMPLING = "sampling/createMessage"
ELICITATION = "elicitation/create"
ROOTS = "roots/list"
SERVER_REQUEST_METHODS = frozenset({SAMPLING, ELICITATION, ROOTS})
_ELICITATION_MODES = frozenset({"form", "url"})


class ClientHandlers:
    """The user's handlers, and the capabilities they make us declare.

    ``sampling`` may be a pydantic-ai ``Model`` or a LangChain chat model instead of a function: it
    then answers each request itself (:mod:`._model_sampling`)."""

    def __init__(
        self,
        *,
        sampling: Handler | SamplingModel | None = None,
        elicitation: Handler | None = None,
        roots: Handler | Iterable[Any] | None = None,
        elicitation_modes: Iterable[str] = ("form", "url"),
    ) -> None:
        if sampling is not None and not callable(sampling):
            # a pydantic-ai or LangChain model answers by itself (its framework imported only now)
            sampling = model_sampler(sampling) or sampling
        for name, value in (("sampling", sampling), ("elicitation", elicitation)):
            if value is not None and not callable(value):
                raise TypeError(
                    f"{name} must be a callable that takes the request params"
                    + (" (or a pydantic-ai or LangChain chat model)" if name == "sampling" else "")
                    + f", not {type(value).__name__}"
                )
        modes = tuple(elicitation_modes)
        unknown = set(modes) - _ELICITATION_MODES
        if unknown or not modes:
            raise ValueError(f"elicitation_modes={modes!r} must name 'form' and/or 'url'")
        if roots is not None and not callable(roots):
            if isinstance(roots, str | os.PathLike):
                roots = [roots]
            if not isinstance(roots, Iterable):
                raise TypeError(
                    f"roots must be a handler or a list of paths or URIs, not {type(roots).__name__}"
                )
            static = [_root(r) for r in roots]  # validates eagerly
            roots = functools.partial(_static_roots, static)
        self._by_method: dict[str, Handler] = {}
        if sampling is not None:
            self._by_method[SAMPLING] = sampling
        if elicitation is not None:
            self._by_method[ELICITATION] = elicitation
        if roots is not None:
            self._by_method[ROOTS] = roots
        self.elicitation_modes = modes if elicitation is not None else ()

    def capabilities(self, era: Era) -> dict[str, Any]:
        return client_capabilities(
            era,
            sampling=SAMPLING in self._by_method,
            elicitation_modes=self.elicitation_modes,
            roots=ROOTS in self._by_method,
            # Always: a task that waits for input this client has no handler for says so on its
            # handle (mcp_notebook.client._task_handles), which is better than a server refusing the call.
            extensions=(TASKS_EXTENSION,),
            # Both eras: a server decides whether to offer Views by what the client declares.
            extension_settings={UI_EXTENSION: ui_extension_settings()},
        )

    def supports(self, method: str) -> bool:
        return method in self._by_method

    async def answer(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """Run the handler for ``method``; McpError(kind="protocol") if we never declared it."""
        handler = self._by_method.get(method)
        if handler is None:
            raise McpError("protocol", f"the server sent {method!r}, which this client did not declare")
        params = dict(params or {})
        if method == ELICITATION:
            mode = params.get("mode", "form")
            if mode not in self.elicitation_modes:
                raise McpError(
                    "protocol", f"the server asked for {mode!r} elicitation, which was not declared"
                )
        if _is_async(handler):
            raw = await handler(params)
        else:
            raw = await anyio.to_thread.run_sync(handler, params, abandon_on_cancel=True)
            if inspect.isawaitable(raw):
                raw = await raw
        return normalize_result(method, raw, params)

    async def fulfil(self, input_requests: Mapping[str, Any]) -> dict[str, Any]:
        """Answer every entry of a modern ``inputRequests`` map, concurrently."""
        responses: dict[str, Any] = {}

        async def one(key: str, request: Any) -> None:
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise McpError("protocol", f"inputRequests[{key!r}] is not a request object")
            responses[key] = await self.answer(request["method"], request.get("params"))

        try:
            async with anyio.create_task_group() as tg:
                for key, request in input_requests.items():
                    tg.start_soon(one, key, request)
        except BaseExceptionGroup as group:
            raise _first_error(group) from None
        return responses


def _first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """One McpError for the caller out of a handler task group's failures.

    Cancellation and other BaseExceptions pass through; an ordinary exception from a user's
    handler becomes an McpError naming only its type (its text may hold user data).
    """
    errors = list(_leaves(group))
    for error in errors:
        if not isinstance(error, Exception):
            return error
    for error in errors:
        if isinstance(error, McpError):
            return error
    first = errors[0]
    logger.error("an input handler raised %s", type(first).__name__, exc_info=first)
    return McpError(
        "protocol", f"a handler answering the server's input request failed ({type(first).__name__})"
    )


def _leaves(group: BaseExceptionGroup[BaseException]) -> Iterable[BaseException]:
    for error in group.exceptions:
        if isinstance(error, BaseExceptionGroup):
            yield from _leaves(error)
        else:
            yield error


def _is_async(fn: Callable[..., Any]) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


def _static_roots(roots: list[dict[str, Any]], _params: dict[str, Any]) -> dict[str, Any]:
    return {"roots": roots}


def _root(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        if not isinstance(value.get("uri"), str):
            raise ValueError(f"a root needs a 'uri' string: {value!r}")
        return dict(value)
    if isinstance(value, Path | os.PathLike):
        path = Path(value).resolve()
        return {"uri": path.as_uri(), "name": path.name or str(path)}
    if isinstance(value, str):
        if "://" in value:
            return {"uri": value}
        return _root(Path(value))
    raise TypeError(f"a root is a URI string, a path or a dict, not {value!r}")


def _plain(value: Any) -> Any:
    """Accept pydantic models and dataclass-like objects from handlers written against other SDKs."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True, exclude_none=True, mode="json")
    return value


def normalize_result(method: str, raw: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """The spec-shaped result for what a handler returned.

    Shorthands: sampling may return a string (the assistant's text); elicitation may return None
    (decline), True/False (URL consent), or the form's content dict without an ``action`` (accept);
    roots may return a list of URIs, paths or root dicts.
    """
    raw = _plain(raw)
    if method == SAMPLING:
        if isinstance(raw, str):
            return {"role": "assistant", "content": {"type": "text", "text": raw}, "model": "unknown"}
        if isinstance(raw, dict) and "content" in raw:
            return {"role": "assistant", "model": "unknown", **raw}
        raise McpError("invalid", "the sampling handler must return a string or a dict with 'content'")
    if method == ELICITATION:
        if raw is None or raw is False:
            return {"action": "decline"}
        if raw is True:
            return {"action": "accept"}
        if isinstance(raw, dict):
            if raw.get("action") in ("accept", "decline", "cancel"):
                return {k: _plain(v) for k, v in raw.items()}
            if "action" in raw:
                raise McpError("invalid", "elicitation 'action' must be 'accept', 'decline' or 'cancel'")
            if params.get("mode") == "url":
                raise McpError("invalid", "a URL elicitation handler returns True/False or an action")
            return {"action": "accept", "content": raw}
        raise McpError("invalid", "the elicitation handler must return a dict, True/False or None")
    if method == ROOTS:
        if isinstance(raw, dict) and isinstance(raw.get("roots"), list):
            return {"roots": [_root(r) for r in raw["roots"]]}
        if isinstance(raw, list | tuple):
            return {"roots": [_root(r) for r in raw]}
        raise McpError("invalid", "the roots handler must return a list of roots")
    if not isinstance(raw, dict):
        raise McpError("invalid", f"the handler for {method!r} must return a dict")
    return raw
