"""Server config files in every common format (mcp_notebook.config): the fixtures under
tests/fixtures/configs/ are written from each tool's documentation; the environment and input
answers come from the tests (``environ=``, ``inputs=``, ``ask=``), never from the real ones."""

from __future__ import annotations

import json
import logging
import os
import pickle
import sys
import traceback
from pathlib import Path
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook.config import (
    ConfigError,
    ServerConfig,
    ServerEntry,
    config_search_path,
    find_config,
    forget_inputs,
    load_config,
)
from mcp_notebook.config._formats import strip_jsonc
from mcp_notebook.config._variables import Context, VariableError, expand
from mcp_notebook.transports import HttpTransport

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "configs"
HOME = Path("/home/tester")


@pytest.fixture(autouse=True)
def _fresh_inputs() -> Any:
    forget_inputs()
    yield
    forget_inputs()


def env(**values: str) -> dict[str, str]:
    return {"HOME": str(HOME), **values}


class Asker:
    """An ``ask=`` callback that records which inputs it was asked for."""

    def __init__(self, **answers: str) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def __call__(self, spec: dict[str, Any]) -> str:
        self.asked.append(spec["id"])
        return self.answers[spec["id"]]


# --- each format -------------------------------------------------------------------------------------


def test_claude_desktop_file() -> None:
    config = load_config(CONFIGS / "claude-desktop" / "claude_desktop_config.json", environ=env())
    assert config.format == "claude-desktop"
    assert list(config) == ["filesystem", "github"]  # "old-one" is disabled
    assert config.declared == ("filesystem", "github", "old-one")
    assert not config.errors
    github = config["github"]
    assert (github.transport, github.command, github.format) == ("stdio", "docker", "claude-desktop")
    assert github.args[-1] == "ghcr.io/github/github-mcp-server"
    assert dict(github.env) == {"GITHUB_PERSONAL_ACCESS_TOKEN": "placeholder-desktop-token"}
    assert github.source == CONFIGS / "claude-desktop" / "claude_desktop_config.json"
    assert config["filesystem"].describe().startswith("npx -y @modelcontextprotocol/server-filesystem")


def test_vscode_file_with_comments_inputs_env_file_and_variables() -> None:
    workspace = CONFIGS / "vscode"
    asker = Asker(**{"perplexity-key": "pplx-answer-1a2b"})
    config = load_config(
        workspace / ".vscode" / "mcp.json",
        inputs={"github-token": "gh-answer-3c4d"},
        ask=asker,
        environ=env(VSCODE_TEST_FLAG="--flag"),
    )
    assert config.format == "vscode"
    assert not config.errors
    assert list(config) == ["perplexity", "github", "legacy", "paths"]
    local = config["perplexity"]
    assert local.transport == "stdio"
    assert local.args == ("-y", "server-perplexity-ask", "--root", str(workspace))
    # envFile under the explicit env: LOG_LEVEL comes from "env", FROM_ENV_FILE from the file
    assert dict(local.env) == {
        "LOG_LEVEL": "debug",
        "FROM_ENV_FILE": "placeholder-env-file-value",
        "PERPLEXITY_API_KEY": "pplx-answer-1a2b",
    }
    assert local.cwd == str(workspace / "server")
    github = config["github"]
    assert (github.transport, github.url) == ("http", "https://api.githubcopilot.com/mcp/")
    assert dict(github.headers) == {"Authorization": "Bearer gh-answer-3c4d"}
    assert config["legacy"].transport == "sse"
    paths = config["paths"]
    assert paths.command == f"{HOME}{os.sep}bin{os.sep}tool"
    assert paths.args == ("--flag",)
    assert asker.asked == ["perplexity-key"]  # the given answer is not asked


def test_vscode_user_settings_shape() -> None:
    path = CONFIGS / "vscode-settings" / "settings.json"
    config = load_config(path, inputs={"api-key": "k-5e6f"}, environ={})
    assert config.format == "vscode"
    service = config["service"]
    assert (service.transport, service.url) == ("http", "https://mcp.example.com/mcp")
    assert dict(service.headers) == {"X-Api-Key": "k-5e6f"}


def test_cursor_file() -> None:
    workspace = CONFIGS / "cursor"
    environ = env(CURSOR_TEST_API_KEY="cursor-key-7a8b", CURSOR_TEST_TOKEN="cursor-token-9c0d")
    config = load_config(workspace / ".cursor" / "mcp.json", environ=environ)
    assert config.format == "cursor"
    local = config["local"]
    assert local.args == (f"{workspace}/tools/server.py", "--name", "cursor", "--home", str(HOME))
    assert dict(local.env) == {"API_KEY": "cursor-key-7a8b", "EXTRA": "placeholder-extra"}
    remote = config["remote"]
    assert remote.transport == "http"
    assert dict(remote.headers) == {"Authorization": "Bearer cursor-token-9c0d"}


def test_claude_code_file_with_defaults() -> None:
    path = CONFIGS / "claude-code" / ".mcp.json"
    config = load_config(path, environ=env(API_KEY="cc-key-1f2e", LEVEL=""))
    assert config.format == "claude-code"
    assert not config.errors
    api = config["api-server"]
    assert api.url == "https://api.example.com/mcp"  # ${API_BASE_URL:-...} unset: the default
    assert dict(api.headers) == {"Authorization": "Bearer cc-key-1f2e"}
    local = config["local"]
    assert local.command == "npx"
    assert local.args == ("-y", "some-server", "--level=warn")  # set but empty: the default, as in sh
    assert dict(local.env) == {"CACHE_DIR": "/tmp/cache"}
    assert config["events"].transport == "sse"

    config = load_config(path, environ=env(API_KEY="k", API_BASE_URL="https://other.test", LEVEL="info"))
    assert config["api-server"].url == "https://other.test/mcp"
    assert config["local"].args[-1] == "--level=info"


def test_our_mcp_json_with_cwd_and_disabled_entries() -> None:
    path = CONFIGS / "ours" / "mcp.json"
    config = load_config(path, environ=env(REMOTE_TOKEN="remote-tok-3a4b"))
    assert config.format == "mcp.json"
    assert list(config) == ["demo", "remote"]
    assert "off" not in config
    assert "off" not in config.errors
    demo = config["demo"]
    assert demo.cwd == str(path.parent / "tools")
    assert demo.client_args() == (
        ["python", "-m", "mcp_notebook.demo"],
        {"env": {"TOKEN": "placeholder-token"}, "cwd": str(path.parent / "tools")},
    )
    assert config["remote"].client_args() == (
        "https://example.com/mcp",
        {"headers": {"Authorization": "Bearer remote-tok-3a4b"}},
    )
    with pytest.raises(ConfigError, match="disabled"):
        load_config(path, only=["off"], environ=env())


def test_a_dict_config_uses_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config({"servers": {"s": {"command": "x", "cwd": "sub", "args": ["${workspaceFolder}"]}}})
    assert (config.format, config.path) == ("dict", None)
    assert config["s"].cwd == str(tmp_path / "sub")
    assert config["s"].args == (str(tmp_path),)
    assert config["s"].format == "dict"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude_desktop_config.json", "claude-desktop"),
        (".vscode/mcp.json", "vscode"),
        (".cursor/mcp.json", "cursor"),
        (".mcp.json", "claude-code"),
        ("mcp.json", "mcp.json"),
    ],
)
def test_format_is_detected_from_the_path(tmp_path: Path, name: str, expected: str) -> None:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"mcpServers": {}}', encoding="utf-8")
    assert load_config(path).format == expected


# --- variables ---------------------------------------------------------------------------------------


def _context(**environ: str) -> Context:
    def answer(input_id: str) -> str:
        if input_id == "tok":
            return "input-answer"
        raise VariableError(f"input {input_id!r} has no answer")

    return Context(environ=environ, workspace=Path("/ws/project"), home=HOME, separator="/", answer=answer)


@pytest.mark.parametrize(
    ("text", "value", "secret"),
    [
        ("plain", "plain", False),
        ("${env:A}", "a-value", True),
        ("x${A}y", "xa-valuey", True),
        ("${A:-dflt}", "a-value", True),
        ("${UNSET:-dflt}", "dflt", False),
        ("${EMPTY:-dflt}", "dflt", False),
        ("${UNSET:-}", "", False),
        ("${workspaceFolder}/a", "/ws/project/a", False),
        ("${workspaceFolderBasename}", "project", False),
        ("${userHome}", str(HOME), False),
        ("a${pathSeparator}b${/}c", "a/b/c", False),
        ("${input:tok}", "input-answer", True),
        ("$A and $${A}", "$A and $a-value", True),
        ("${env:A}${env:A}", "a-valuea-value", True),
        ("${env:NESTED}", "${B}", True),  # a value put in is not expanded again
        ("unclosed ${A", "unclosed ${A", False),
    ],
)
def test_variables_expand(text: str, value: str, secret: bool) -> None:
    result = expand(text, _context(A="a-value", EMPTY="", NESTED="${B}"))
    assert (result.value, result.secret) == (value, secret)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("${env:MISSING}", "needs the environment variable MISSING (not set)"),
        ("${MISSING}", "needs the environment variable MISSING (not set)"),
        ("${env:}", "${env:} names no environment variable"),
        ("${config:python.path}", "unknown variable ${config:python.path}"),
        ("${command:pick}", "unknown variable ${command:pick}"),
        ("${file}", "unknown variable ${file}"),
        ("${}", "unknown variable ${}"),
        ("${input:other}", "input 'other' has no answer"),
    ],
)
def test_bad_variables_are_errors(text: str, message: str) -> None:
    with pytest.raises(VariableError) as caught:
        expand(text, _context())
    assert str(caught.value) == message


def test_jsonc_comments_and_trailing_commas_keep_positions() -> None:
    text = '{\n  // c\n  "a": "http://x//y", /* b */\n  "b": [1, 2,],\n}'
    assert json.loads(strip_jsonc(text)) == {"a": "http://x//y", "b": [1, 2]}
    assert strip_jsonc(text).count("\n") == text.count("\n")
    assert json.loads(strip_jsonc('{"a": "\\" // not a comment",}')) == {"a": '" // not a comment'}


# --- inputs ------------------------------------------------------------------------------------------


def test_inputs_are_asked_once_and_cached_across_loads() -> None:
    path = CONFIGS / "vscode" / ".vscode" / "mcp.json"
    asker = Asker(**{"github-token": "gh-cached-5f6a"})
    first = load_config(path, only=["github"], ask=asker, environ=env())
    second = load_config(path, only=["github"], ask=asker, environ=env())
    assert asker.asked == ["github-token"]
    assert first["github"].headers == second["github"].headers == {"Authorization": "Bearer gh-cached-5f6a"}
    forget_inputs()
    load_config(path, only=["github"], ask=asker, environ=env())
    assert asker.asked == ["github-token", "github-token"]


def test_inputs_are_asked_only_for_the_selected_servers() -> None:
    path = CONFIGS / "vscode" / ".vscode" / "mcp.json"
    asker = Asker(**{"github-token": "t", "perplexity-key": "k"})
    config = load_config(path, only=["legacy", "github"], ask=asker, environ=env())
    assert list(config) == ["legacy", "github"]
    assert asker.asked == ["github-token"]  # the spec asked for is the declared one
    # "paths" needs VSCODE_TEST_FLAG, which is unset: not selected, so not resolved, no error
    assert not config.errors


def test_ask_gets_the_input_declaration() -> None:
    seen: list[dict[str, Any]] = []

    def ask(spec: dict[str, Any]) -> str:
        seen.append(spec)
        return "answer"

    load_config(CONFIGS / "vscode-settings" / "settings.json", ask=ask, environ={})
    assert seen == [
        {"type": "promptString", "id": "api-key", "description": "Service API key", "password": True}
    ]


def test_the_default_ask_is_getpass_with_the_description(monkeypatch: pytest.MonkeyPatch) -> None:
    prompts: list[str] = []

    def fake_getpass(prompt: str) -> str:
        prompts.append(prompt)
        return "typed-secret-8d9e"

    monkeypatch.setattr("getpass.getpass", fake_getpass)
    config = load_config(CONFIGS / "vscode-settings" / "settings.json", environ={})
    assert config["service"].headers == {"X-Api-Key": "typed-secret-8d9e"}
    assert len(prompts) == 1
    assert "Service API key" in prompts[0]


def test_an_input_that_cannot_be_answered_is_an_error_for_its_servers_only() -> None:
    def ask(spec: dict[str, Any]) -> str:
        raise EOFError("no terminal")

    path = CONFIGS / "vscode" / ".vscode" / "mcp.json"
    config = load_config(path, ask=ask, environ=env(VSCODE_TEST_FLAG="x"))
    assert set(config.errors) == {"perplexity", "github"}
    assert list(config) == ["legacy", "paths"]
    assert str(config.errors["github"]).endswith(
        "server 'github', field 'headers.Authorization': input 'github-token' has no answer (EOFError)"
    )


# --- mistakes ----------------------------------------------------------------------------------------

BAD_ENTRIES = {
    "not-an-object": (None, "is a JSON list, not an object"),
    "nothing": (None, "has neither 'command' nor 'url'"),
    "ftp": ("url", "is not an http(s) URL"),
    "args-not-strings": ("args", "must be a list of strings"),
    "missing-variable": (
        "headers.Authorization",
        "needs the environment variable BAD_TEST_UNSET_TOKEN (not set)",
    ),
    "unknown-variable": ("args[0]", "unknown variable ${config:python.path}"),
    "no-env-file": ("envFile", "file not found"),
    "unknown-type": ("type", "unknown type 'websocket' (stdio, http or sse)"),
    "no-input-answer": ("env.KEY", "input 'never' has no answer"),
}


def test_each_bad_entry_is_one_clear_error_and_the_others_load() -> None:
    path = CONFIGS / "bad" / "mcp.json"

    def ask(spec: dict[str, Any]) -> str:
        raise KeyError(spec["id"])

    config = load_config(path, ask=ask, environ=env())
    assert list(config) == ["good"]
    assert set(config.errors) == set(BAD_ENTRIES)
    for name, (field, message) in BAD_ENTRIES.items():
        error = config.errors[name]
        assert isinstance(error, ConfigError)
        assert (error.path, error.server, error.field) == (path, name, field)
        assert message in str(error)
        assert str(error).startswith(f"{path}: server {name!r}")
    assert str(config.errors["missing-variable"]) == (
        f"{path}: server 'missing-variable', field 'headers.Authorization': "
        "needs the environment variable BAD_TEST_UNSET_TOKEN (not set)"
    )


def test_only_selects_and_an_unknown_name_lists_the_known_ones() -> None:
    path = CONFIGS / "bad" / "mcp.json"
    config = load_config(path, only=["good"], environ=env())
    assert list(config) == ["good"]
    assert not config.errors
    with pytest.raises(ConfigError) as caught:
        load_config(path, only=["good", "gone"], environ=env())
    assert caught.value.server == "gone"
    assert "no such server" in str(caught.value)
    assert "good, not-an-object, nothing" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"mcpServers": {"a": {"command": "x"},, }}', "invalid JSON at line 1, column 41"),
        ("[1, 2]", "holds a JSON list, not an object"),
        ('{"mcpServers": []}', "'mcpServers' is not an object"),
        ('{"servers": {}, "inputs": {}}', "'inputs' is not a list"),
    ],
)
def test_a_file_that_cannot_be_used_raises_naming_it(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)
    assert caught.value.path == path


def test_a_missing_file_raises_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(tmp_path / "nope.json")


# --- search path -------------------------------------------------------------------------------------


def test_search_order_on_linux(tmp_path: Path) -> None:
    cwd, home = tmp_path / "project", tmp_path / "home"
    assert config_search_path(cwd=cwd, home=home, platform="linux", environ={}) == [
        cwd / "mcp.json",
        cwd / ".mcp.json",
        cwd / ".vscode" / "mcp.json",
        cwd / ".cursor" / "mcp.json",
        home / ".cursor" / "mcp.json",
        home / ".config" / "Claude" / "claude_desktop_config.json",
        home / ".config" / "mcp" / "mcp.json",
    ]
    xdg = tmp_path / "xdg"
    paths = config_search_path(cwd=cwd, home=home, platform="linux", environ={"XDG_CONFIG_HOME": str(xdg)})
    assert paths[-2:] == [xdg / "Claude" / "claude_desktop_config.json", xdg / "mcp" / "mcp.json"]


def test_search_order_on_macos_and_windows(tmp_path: Path) -> None:
    cwd, home, appdata = tmp_path / "p", tmp_path / "h", tmp_path / "roaming"
    mac = config_search_path(cwd=cwd, home=home, platform="darwin", environ={})
    assert mac[5] == home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    windows = config_search_path(cwd=cwd, home=home, platform="win32", environ={"APPDATA": str(appdata)})
    assert windows[5] == appdata / "Claude" / "claude_desktop_config.json"


def test_find_config_is_the_first_existing_file(tmp_path: Path) -> None:
    cwd, home = tmp_path / "project", tmp_path / "home"
    kwargs: dict[str, Any] = {"cwd": cwd, "home": home, "platform": "linux", "environ": {}}
    assert find_config(**kwargs) is None
    user = home / ".config" / "mcp" / "mcp.json"
    user.parent.mkdir(parents=True)
    user.write_text("{}")
    assert find_config(**kwargs) == user
    cursor = cwd / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    cursor.write_text("{}")
    assert find_config(**kwargs) == cursor
    (cwd / ".mcp.json").write_text("{}")
    assert find_config(**kwargs) == cwd / ".mcp.json"


def test_load_config_without_a_file_searches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    environ = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    monkeypatch.setattr(sys, "platform", "linux")
    with pytest.raises(FileNotFoundError) as caught:
        load_config(environ=environ)
    assert str(tmp_path / ".vscode" / "mcp.json") in str(caught.value)
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "y"}}}')
    config = load_config(environ=environ)
    assert (config.path, config.format, list(config)) == (tmp_path / ".mcp.json", "claude-code", ["x"])


# --- client_args -------------------------------------------------------------------------------------


def test_client_args_for_each_transport() -> None:
    stdio = ServerEntry("s", "stdio", command="python", args=("-m", "x"))
    assert stdio.client_args() == (["python", "-m", "x"], {})
    http = ServerEntry("h", "http", url="https://h.test/mcp", headers={"A": "b"})
    assert http.client_args() == ("https://h.test/mcp", {"headers": {"A": "b"}})
    sse = ServerEntry("e", "sse", url="https://h.test/sse", headers={"A": "b"})
    first, options = sse.client_args()
    assert options == {}
    assert isinstance(first, HttpTransport)
    assert first.mode == "sse"
    assert str(first.url) == "https://h.test/sse"
    second, _ = sse.client_args()
    assert second is not first  # a transport belongs to one client


def test_an_entry_is_read_only() -> None:
    entry = ServerEntry("s", "stdio", command="c", env={"K": "v"})
    with pytest.raises(TypeError):
        entry.env["K"] = "w"  # type: ignore[index]
    assert isinstance(load_config({"mcpServers": {}}), ServerConfig)
    assert pickle.loads(pickle.dumps(entry)) == entry


@pytest.mark.anyio
@pytest.mark.usefixtures("no_leaked_processes")
async def test_end_to_end_a_config_entry_runs_the_demo_server() -> None:
    config = load_config(CONFIGS / "demo" / "mcp.json", environ={"MCP_TEST_PYTHON": sys.executable})
    target, options = config["demo"].client_args()
    assert target == [sys.executable, "-m", "mcp_notebook.demo"]
    async with mcp_notebook.Client(target, **options) as client:
        tools = await client.list_tools()
        assert "add" in {tool.name for tool in tools}
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5.0}


# --- secrets -----------------------------------------------------------------------------------------


def test_no_secret_in_a_repr_a_message_a_log_line_or_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    secrets = {
        "env": "sekrit-env-4b5c6d",
        "input": "sekrit-input-7e8f9a",
        "header": "sekrit-header-0b1c2d",
        "args": "sekrit-arg-3e4f5a",
        "url": "sekrit-url-6b7c8d",
    }
    raw = {
        "inputs": [{"type": "promptString", "id": "key", "description": "Key", "password": True}],
        "servers": {
            "local": {
                "command": "server",
                "args": ["--token", "${env:ARG_TOKEN}"],
                "env": {"A": "${env:ENV_TOKEN}", "B": "${input:key}"},
            },
            "remote": {
                "url": "https://u:${env:URL_TOKEN}@h.test/mcp?key=${env:URL_TOKEN}",
                "headers": {"Authorization": "Bearer ${env:HEADER_TOKEN}", "X-Key": "${input:key}"},
            },
            "events": {"type": "sse", "url": "https://h.test/sse", "headers": {"X": "${env:HEADER_TOKEN}"}},
            "broken": {"command": "server", "env": {"A": "${env:ENV_TOKEN}", "B": "${env:NOT_SET}"}},
            "broken-input": {"url": "https://h.test/", "headers": {"X": "${input:key}${config:x}"}},
        },
    }
    environ = {
        "ENV_TOKEN": secrets["env"],
        "ARG_TOKEN": secrets["args"],
        "URL_TOKEN": secrets["url"],
        "HEADER_TOKEN": secrets["header"],
    }
    caplog.set_level(logging.DEBUG)
    config = load_config(raw, inputs={"key": secrets["input"]}, environ=environ)
    assert set(config.errors) == {"broken", "broken-input"}
    assert config["local"].env == {"A": secrets["env"], "B": secrets["input"]}  # they did load
    assert config["remote"].headers["Authorization"] == f"Bearer {secrets['header']}"

    shown: list[str] = [repr(config), str(config.servers), repr(config.errors)]
    for entry in config.values():
        shown += [repr(entry), str(entry), entry.describe()]
    shown.append(repr(config["events"].client_args()[0]))  # the transport, unlike argv and URL, is shown
    for error in config.errors.values():
        shown += [str(error), repr(error), "".join(traceback.format_exception(error))]
        shown.append(repr(pickle.loads(pickle.dumps(error))))
    try:
        raise config.errors["broken"]
    except ConfigError:
        shown.append(traceback.format_exc())
    shown.append(caplog.text)
    text = "\n".join(shown)
    assert "ENV_TOKEN" not in str(config.errors["broken"])  # the variable that failed is named...
    assert "NOT_SET" in str(config.errors["broken"])
    for kind, secret in secrets.items():
        assert secret not in text, f"the {kind} secret leaked"
    assert "${env:ARG_TOKEN}" in config["local"].describe()  # ...and a secret shows as written
    assert repr(config["local"]) == (
        "ServerEntry(name='local', transport='stdio', command='server', args=2, env keys=['A', 'B'], "
        "format='dict')"
    )
    assert config["remote"].describe() == "https://h.test/mcp"


# --- connect("name") in the notebook layer ------------------------------------------------------------


def test_a_name_is_found_in_any_format_and_the_first_file_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_notebook.notebook import _targets as _config

    home = tmp_path / "home"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SHARED_TOKEN", "shared-tok-1d2e")
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "mcp.json").write_text(
        '{"servers": {"shared": {"type": "sse", "url": "https://first.test/sse",'
        ' "headers": {"A": "${env:SHARED_TOKEN}"}}, // JSONC\n "bad": {"command": 1}}}'
    )
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "mcp.json").write_text(
        '{"mcpServers": {"shared": {"command": "second"}, "cursor-only": {"command": "python3"}}}'
    )
    assert _config.server_names() == ["shared", "bad", "cursor-only"]
    target, options, label = _config.resolve_target("shared")
    assert isinstance(target, HttpTransport)
    assert (target.mode, options, label) == ("sse", {}, "shared")
    assert _config.resolve_target("cursor-only") == (["python3"], {}, "cursor-only")
    with pytest.raises(ConfigError, match="server 'bad', field 'command'"):
        _config.resolve_target("bad")
    with pytest.raises(ValueError, match="servers in config files: shared, bad, cursor-only"):
        _config.resolve_target("no-such-server-anywhere")
    assert _config.resolve_target("two words") == ("two words", {}, None)
