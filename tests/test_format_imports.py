"""jsonschema's format libraries load when a format check needs them, not on the first call (issue #37, 3).

With JupyterLab's ``jsonschema[format-nongpl]`` installed, importing jsonschema imported every format
library, ``rfc3987_syntax`` building an IRI grammar with lark among them: the first call of a tool
whose arguments went to jsonschema took about a second (0.94 s; the official SDK client's, 0.04 s;
``benchmarks/RESULTS.md``, row ``first-call/stdio/echo/formats``). Each check here runs in a fresh
``python`` process (what is measured happens once per process) against
``tests/servers/schema_server.py``: after a first call whose check ran jsonschema, the grammar is
not loaded; format checks still give the same verdicts, in our forms and in the process's own
``jsonschema.FormatChecker``, loading each library when its format is checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import python_server

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

GUARD = 120  # what stops a hang; never a budget the test asserts

#: pydantic's schema for ``url: AnyUrl, since: datetime | None, home: str | None`` (an IRI) and a
#: nested model by ``$ref``, which takes the call past the quick check, to jsonschema.
VISIT = {
    "name": "visit",
    "inputSchema": {
        "$defs": {"Stay": {"type": "object", "properties": {"nights": {"type": "integer"}}}},
        "type": "object",
        "properties": {
            "stay": {"$ref": "#/$defs/Stay"},
            "url": {"type": "string", "format": "uri", "minLength": 1},
            "since": {
                "anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
                "default": None,
            },
            "home": {"anyOf": [{"type": "string", "format": "iri"}, {"type": "null"}], "default": None},
        },
        "required": ["url"],
    },
}

PROBE = """
import asyncio, json, sys
from mcp_notebook import Client

GRAMMAR = ("rfc3987_syntax", "lark")
report = {}

async def main():
    async with Client(json.loads(sys.argv[1])) as client:
        result = await client.call_tool(
            "visit", {"url": "https://example.com/a", "since": "2026-01-01T00:00:00Z", "stay": {"nights": 2}}
        )
        report["called"] = not result.is_error
    report["jsonschema_ran"] = "jsonschema" in sys.modules
    report["after_call"] = [name for name in GRAMMAR if name in sys.modules]

asyncio.run(main())

from mcp_notebook.widgets import SchemaForm

schema = json.loads(sys.argv[2])
form = SchemaForm(schema, values={"url": "not a uri", "since": "yesterday"})
report["form_errors"] = form.errors()
report["after_uri_check"] = [name for name in GRAMMAR if name in sys.modules]
form.set_value({"url": "https://example.com", "home": "http://exa mple.org/ü"})
report["iri_errors"] = form.errors()
form.set_value({"url": "https://example.com", "home": "https://example.org/ü"})
report["iri_ok"] = form.errors()
report["after_iri_check"] = [name for name in GRAMMAR if name in sys.modules]

import jsonschema, webcolors

checker = jsonschema.FormatChecker()
soon = "soon"
report["theirs"] = {
    "iri": [checker.conforms("https://example.org/ü", "iri"), checker.conforms("http://exa mple", "iri")],
    "uri": [checker.conforms("https://example.org/", "uri"), checker.conforms("no scheme", "uri")],
    "date-time": [checker.conforms("2026-01-01T00:00:00Z", "date-time"), checker.conforms(soon, "date-time")],
    "uri-template": [checker.conforms("/a/{b}", "uri-template"), checker.conforms("/a/{b", "uri-template")],
    "hostname": [checker.conforms("example.org", "hostname"), checker.conforms("-x-", "hostname")],
}
report["webcolors"] = [type(webcolors).__name__, webcolors.name_to_hex("red")]
print(json.dumps(report))
"""


def test_the_first_call_loads_no_format_grammar_and_formats_still_judge(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tools": [VISIT]}))
    server = python_server("schema_server.py", "--spec", str(spec))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(server), json.dumps(VISIT["inputSchema"])],
        capture_output=True,
        text=True,
        timeout=GUARD,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["called"] is True
    assert report["jsonschema_ran"] is True  # the call's check did go through jsonschema
    assert report["after_call"] == []  # ... without building the IRI grammar
    # our form asserts formats: the same verdicts as before, the grammar still not needed
    assert "url: is not a valid uri" in report["form_errors"], report["form_errors"]
    assert any(e.startswith("since: ") for e in report["form_errors"]), report["form_errors"]
    assert report["after_uri_check"] == []
    # an IRI check loads its library when it runs, and judges as it always did
    assert any(e.startswith("home:") for e in report["iri_errors"]), report["iri_errors"]
    assert report["iri_ok"] == []
    assert report["after_iri_check"] == ["rfc3987_syntax", "lark"]
    # the process's own jsonschema keeps every checker it had, with the same verdicts
    for verdicts in report["theirs"].values():
        assert verdicts == [True, False], report["theirs"]
    assert report["webcolors"] == ["module", "#ff0000"]  # the real library, not a stand-in
