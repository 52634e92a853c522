"""One exception tree: each McpError kind is a subclass, and McpError(kind, ...) builds it.

``except McpTimeout`` must catch what ``except McpError`` with ``exc.kind == "timeout"`` caught,
against a real server, and the errors still pickle and copy (notebooks and worker pools move them
between processes). ConfigError and AppError are McpErrors of kind "invalid"; ConfigError stays a
ValueError.
"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

import mcp_notebook
from mcp_notebook import (
    AppError,
    Client,
    McpAuthError,
    McpCancelled,
    McpClosed,
    McpError,
    McpInvalidInput,
    McpOverloaded,
    McpProtocolError,
    McpServerError,
    McpTimeout,
    McpTransportError,
    McpVersionError,
)
from mcp_notebook.config import ConfigError, load_config
from mcp_notebook.protocol import ERROR_KINDS

from .conftest import python_server

CLASSES = {
    "transport": McpTransportError,
    "timeout": McpTimeout,
    "protocol": McpProtocolError,
    "server": McpServerError,
    "auth": McpAuthError,
    "overloaded": McpOverloaded,
    "cancelled": McpCancelled,
    "closed": McpClosed,
    "version": McpVersionError,
    "invalid": McpInvalidInput,
}


def test_every_kind_has_its_class() -> None:
    assert set(CLASSES) == set(ERROR_KINDS)


@pytest.mark.parametrize("kind", sorted(ERROR_KINDS))
def test_mcperror_of_a_kind_is_that_kinds_class(kind: str) -> None:
    err = McpError(kind, "went wrong", code=-32000, data={"x": 1})  # type: ignore[arg-type]
    assert type(err) is CLASSES[kind]
    assert isinstance(err, McpError)
    assert (err.kind, err.message, err.code, err.data) == (kind, "went wrong", -32000, {"x": 1})
    assert str(err) == "went wrong (code -32000)"
    assert repr(err) == f"McpError(kind={kind!r}, code=-32000, message='went wrong')"
    # The class alone, the message alone: the same error.
    direct = CLASSES[kind]("went wrong", code=-32000)
    assert (type(direct), direct.kind, direct.message) == (CLASSES[kind], kind, "went wrong")
    assert type(McpError(kind=kind, message="m")) is CLASSES[kind]


@pytest.mark.parametrize("kind", sorted(ERROR_KINDS))
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_each_kind_pickles_and_copies_as_itself(kind: str, protocol: int) -> None:
    err = McpError(kind, "went wrong", code=7, data=[1, "two"])  # type: ignore[arg-type]
    for clone in (pickle.loads(pickle.dumps(err, protocol=protocol)), copy.copy(err), copy.deepcopy(err)):
        assert type(clone) is CLASSES[kind]
        assert (clone.kind, clone.message, clone.code, clone.data) == (kind, "went wrong", 7, [1, "two"])


def test_a_class_refuses_another_kind_and_mcperror_an_unknown_one() -> None:
    with pytest.raises(ValueError, match="kind 'timeout', not 'server'"):
        McpTimeout("server", "no")
    with pytest.raises(ValueError, match="unknown McpError kind"):
        McpError("bogus", "no")  # type: ignore[arg-type]


def test_a_servers_error_object_becomes_its_class() -> None:
    assert type(McpError.from_jsonrpc({"code": -32601, "message": "nope"})) is McpServerError
    assert type(McpError.from_jsonrpc({"code": -32022, "message": "no version"})) is McpVersionError
    assert type(McpError.from_jsonrpc("garbage")) is McpProtocolError


def test_every_exception_the_face_exports_is_an_mcperror() -> None:
    exported = [getattr(mcp_notebook, name) for name in mcp_notebook.__all__]
    exceptions = [obj for obj in exported if isinstance(obj, type) and issubclass(obj, BaseException)]
    assert set(CLASSES.values()) | {McpError, ConfigError, AppError} <= set(exceptions)
    assert all(issubclass(obj, McpError) for obj in exceptions)
    assert mcp_notebook.ConfigError is ConfigError


@pytest.mark.anyio
async def test_except_mcptimeout_catches_a_real_call_that_timed_out() -> None:
    async with Client(python_server("deadline_server.py"), timeout=10) as client:
        with pytest.raises(McpTimeout) as caught:
            await client.call_tool("hang", {}, timeout=0.5)
        assert caught.value.kind == "timeout"
        assert "hang" in caught.value.message
    with pytest.raises(McpClosed):
        await client.call_tool("echo", {"n": 1})


def test_config_error_is_a_valueerror_and_an_invalid_mcperror(tmp_path: Path) -> None:
    broken = tmp_path / "mcp.json"
    broken.write_text("{ not json")
    with pytest.raises(ValueError, match="invalid JSON") as caught:
        load_config(broken)
    err = caught.value
    assert isinstance(err, ConfigError)
    assert isinstance(err, McpInvalidInput)
    assert err.kind == "invalid"
    assert err.path == broken
    assert str(err).startswith(f"{broken}: invalid JSON")
    assert repr(err) == f"ConfigError({str(err)!r})"
    assert err.args == (str(err),)
    clone = pickle.loads(pickle.dumps(err))
    assert (type(clone), str(clone), clone.path) == (ConfigError, str(err), broken)
    # Its constructor is unchanged: the message, then where.
    where = ConfigError("needs GITHUB_TOKEN", server="github", field="env.GITHUB_TOKEN")
    assert str(where) == "server 'github', field 'env.GITHUB_TOKEN': needs GITHUB_TOKEN"
    assert where.message == str(where)  # what code that shows an McpError's message shows
    assert where.reason == "needs GITHUB_TOKEN"


def test_app_error_is_an_invalid_mcperror() -> None:
    err = AppError("not an app tool")
    assert isinstance(err, McpInvalidInput)
    assert (err.kind, err.message) == ("invalid", "not an app tool")


def test_the_transports_own_errors_are_transport_errors() -> None:
    # `except McpTransportError` must catch every transport failure, these two included.
    from mcp_notebook.transports import NotDelivered
    from mcp_notebook.transports._http_sse import EndpointRefused

    for error in (NotDelivered("pipe closed"), EndpointRefused("transport", "other origin")):
        assert isinstance(error, McpTransportError)
        assert error.kind == "transport"
