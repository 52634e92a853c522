"""Definition of the ``mcp-notebook-demo`` MCP server.

Everything here is registered on a fresh :class:`~mcp.server.mcpserver.MCPServer`
by :func:`build_server`; the module-level functions are the handlers. The data
is a deterministic, seeded toy sales data set, so results are reproducible
across runs and processes.

Nothing in this module writes to stdout but :func:`run_http`'s one
``MCP_HTTP_URL=...`` line: on the stdio transport stdout *is* the protocol
channel. Logging goes to stderr (the SDK configures it so).
"""

import csv
import datetime
import functools
import io
import json
import logging
import math
import random
import warnings
import weakref
from collections import Counter, defaultdict
from typing import Annotated, Any, Literal

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
)
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageResult,
    EmptyResult,
    ListRootsResult,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    SubscribeRequestParams,
    TextContent,
    ToolAnnotations,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel, Field

from mcp_notebook.demo._task_runner import TaskRunner, current_task
from mcp_notebook.demo._tokens import valid_token

__all__ = [
    "HTTP_URL_PREFIX",
    "PRODUCTS",
    "REGIONS",
    "SERVER_NAME",
    "LogLevel",
    "NameForm",
    "SaleRecord",
    "build_server",
    "http_app",
    "run_http",
    "run_stdio",
    "serve_stdio",
]

logger = logging.getLogger(__name__)

SERVER_NAME = "mcp-notebook-demo"
SERVER_VERSION = "0.1.0"

REGIONS: tuple[str, ...] = ("north", "south", "east", "west")
"""The four sales regions, in a fixed order."""

PRODUCTS: dict[str, float] = {"widget": 4.50, "gadget": 12.00, "gizmo": 27.50, "doohickey": 8.25}
"""Product name -> list price; sold prices vary around it."""

REGION_TEMPLATE = "demo://region/{name}"
LogMessageLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
"""The levels of a log message sent to the client (MCP's, from RFC 5424)."""

NOTE_URI = "demo://note"
"""A subscribable text resource; ``set_note`` changes it and announces the update."""

NOTIFICATION_OPTIONS = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
"""What the ``initialize`` handshake declares: the lists may change and the server says so.

The SDK derives the handshake's ``listChanged`` flags from these options only (they default to
False), while the modern ``server/discover`` derives them from serving ``subscriptions/listen``.
"""

_SEED = 20250101
_DATASET_SIZE = 240
_RECORDS_PER_DAY = 4
_START_DATE = datetime.date(2025, 1, 1)

INSTRUCTIONS = """\
A small demo server with a toy sales data set (regions: north, south, east, west).

- Call `sales_records` (optionally filtered by region) for structured rows that load straight \
into a DataFrame, or read `demo://data/sales.csv` for the whole data set as CSV.
- Read `demo://region/{name}` for a JSON summary of one region.
- The `analyze_region` prompt sets up an analysis of one region.
- `add`, `echo`, `slow_count` (progress), `ask_user_name` (elicitation), `summarize` (sampling), \
`list_roots` (roots), `write_log` (log messages) and `fail` (error result) exist to exercise \
client features.
- `add_tool` registers a new tool at run time (announced as a tools list change); `set_note` \
changes the subscribable resource `demo://note` (announced as a resource update).
- `build_report` and `confirm_export` run only as tasks (they answer at once and go on working; \
`confirm_export` asks the user to confirm in a form first); `sum_numbers` runs as a task when asked.
"""

README = """\
# mcp-notebook-demo

A demo MCP server for the `mcp_notebook` client library. It serves a deterministic,
seeded toy sales data set: {size} records over {days} days, four regions
({regions}) and four products ({products}).

## Tools

| Tool | What it does |
| --- | --- |
| `sales_records(region="all", limit=20)` | Sales records (date, region, product, units, price) |
| `add(a, b)` | Adds two numbers (structured result) |
| `echo(text)` | Returns the text unchanged |
| `slow_count(steps=5, delay=0.2)` | Counts slowly, reporting progress after every step |
| `ask_user_name(greeting="Hello")` | Asks for your name (elicitation) and greets you |
| `summarize(text, max_words=30)` | Summarizes text with the client's LLM (sampling) |
| `list_roots()` | Lists the roots the client shares (`roots/list`) |
| `write_log(message, level="info")` | Sends `message` to the client as a log message at `level` |
| `fail(message)` | Always fails with `message` (an `isError` result) |
| `add_tool(name)` | Registers a new echo tool called `name` and announces the tools list change |
| `set_note(text)` | Changes `demo://note` and announces the update to its subscribers |
| `build_report(topic, sections=4, delay=0.5)` | Task (required): writes a report, a section at a time |
| `confirm_export(rows=100)` | Task (required): asks to confirm and pick CSV or JSON, then exports |
| `sum_numbers(numbers, delay=0)` | Adds numbers; a task when the client asks for one (optional) |

Tasks come in both flavours: the 2025-11-25 core tasks on a legacy (`initialize`) connection
(`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, status notifications) and the
2026-07-28 extension `io.modelcontextprotocol/tasks` on a modern one (`tasks/get`, `tasks/update`,
`tasks/cancel`). They live in the server's memory for 10 minutes and are polled every 250 ms.

## Resources

- `demo://readme`: this document
- `demo://data/sales.csv`: the whole data set as CSV
- `demo://region/{{name}}`: JSON summary of one region
- `demo://note`: a short text note (starts as "empty"); subscribe to hear of `set_note` changes

## Prompts

- `analyze_region(region)`: analyze one region's sales (`region` has completions)
- `greeting(name)`: write a short greeting
"""


# --------------------------------------------------------------------------- data


class SaleRecord(BaseModel):
    """One line of the sales data set."""

    date: str = Field(description="Sale date, ISO 8601 (YYYY-MM-DD)")
    region: str = Field(description="Sales region: north, south, east or west")
    product: str = Field(description="Product name")
    units: int = Field(description="Units sold")
    price: float = Field(description="Unit price in USD")


@functools.cache
def _dataset() -> tuple[SaleRecord, ...]:
    """The full data set, generated once from a fixed seed (identical in every process)."""
    rng = random.Random(_SEED)
    products = sorted(PRODUCTS)
    records: list[SaleRecord] = []
    for i in range(_DATASET_SIZE):
        day = _START_DATE + datetime.timedelta(days=i // _RECORDS_PER_DAY)
        product = rng.choice(products)
        records.append(
            SaleRecord(
                date=day.isoformat(),
                region=rng.choice(REGIONS),
                product=product,
                units=rng.randint(1, 40),
                price=round(PRODUCTS[product] * rng.uniform(0.85, 1.15), 2),
            )
        )
    return tuple(records)


def _records_for(region: str) -> list[SaleRecord]:
    return [r for r in _dataset() if region == "all" or r.region == region]


def _matching_regions(prefix: str) -> list[str]:
    """Regions starting with ``prefix`` (case-insensitive); all of them for an empty prefix."""
    wanted = prefix.strip().lower()
    return [region for region in REGIONS if region.startswith(wanted)]


# -------------------------------------------------------------------------- tools


def sales_records(
    region: Annotated[
        Literal["all", "north", "south", "east", "west"],
        Field(description='Region to filter by, or "all" for every region'),
    ] = "all",
    limit: Annotated[
        int, Field(ge=1, le=_DATASET_SIZE, description="Maximum number of records to return")
    ] = 20,
) -> list[SaleRecord]:
    """Return sales records from the demo data set, oldest first.

    Each record has `date` (ISO string), `region`, `product`, `units` and `price`. The data is
    **deterministic**, so the same arguments always return the same rows.
    """
    return _records_for(region)[:limit]


def add(
    a: Annotated[float, Field(description="First addend")],
    b: Annotated[float, Field(description="Second addend")],
) -> float:
    """Add two numbers."""
    return a + b


def echo(text: Annotated[str, Field(description="Text to echo back")]) -> str:
    """Return the given text unchanged."""
    return text


async def slow_count(
    ctx: Context,
    steps: Annotated[int, Field(ge=0, le=10_000, description="Number of steps to count")] = 5,
    delay: Annotated[float, Field(ge=0, description="Seconds to wait before each step")] = 0.2,
) -> str:
    """Count to `steps`, sleeping `delay` seconds per step and reporting progress after each.

    A large `delay` makes this a long-running call, handy for timeout and cancellation tests.
    """
    started = anyio.current_time()
    for step in range(1, steps + 1):
        await anyio.sleep(delay)
        await ctx.report_progress(step, steps, message=f"step {step}/{steps}")
    elapsed = anyio.current_time() - started
    return f"Counted to {steps} in {elapsed:.2f}s."


class NameForm(BaseModel):
    """Tell the demo server your name so it can greet you."""

    name: str = Field(description="Your name")


async def _ask_for_name() -> Elicit[NameForm]:
    return Elicit("Hi! What is your name?", NameForm)


async def ask_user_name(
    answer: Annotated[ElicitationResult[NameForm], Resolve(_ask_for_name)],
    greeting: Annotated[str, Field(description="Greeting word to use")] = "Hello",
) -> str:
    """Ask the user for their name (via elicitation) and greet them."""
    if answer.action == "accept":
        name = answer.data.name.strip() or "stranger"
        return f"{greeting}, {name}! Nice to meet you."
    if answer.action == "decline":
        return "No problem, you don't have to tell me your name."
    return "The name request was cancelled."


async def _ask_for_summary(text: str, max_words: int) -> Sample:
    prompt = f"Summarize the following text in at most {max_words} words:\n\n{text}"
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=max(64, max_words * 4),
        system_prompt="You are a concise assistant. Reply with the summary only.",
    )


async def summarize(
    sampled: Annotated[CreateMessageResult, Resolve(_ask_for_summary)],
    text: Annotated[str, Field(description="Text to summarize")],
    max_words: Annotated[int, Field(ge=1, le=500, description="Maximum summary length in words")] = 30,
) -> str:
    """Summarize text by sampling the client's LLM; returns the model's summary."""
    content = sampled.content
    if not isinstance(content, TextContent):
        raise ToolError(f"The client's model returned {content.type} content instead of text")
    return content.text


async def _ask_for_roots() -> ListRoots:
    return ListRoots()


async def list_roots(roots: Annotated[ListRootsResult, Resolve(_ask_for_roots)]) -> str:
    """List the roots the client shares with this server (`roots/list`), one URI per line.

    The client is asked at every call, so a client whose roots change shows the change here.
    """
    if not roots.roots:
        return "The client shares no roots."
    return "\n".join(f"{root.uri} ({root.name})" if root.name else str(root.uri) for root in roots.roots)


async def write_log(
    ctx: Context,
    message: Annotated[str, Field(max_length=10_000, description="The log message's text")],
    level: Annotated[LogMessageLevel, Field(description="The message's level (RFC 5424)")] = "info",
) -> str:
    """Send `message` to the client as a log message (`notifications/message`) at `level`.

    Handy to watch a client's log view and its level filter. Server-to-client logging is
    deprecated in the 2026-07-28 protocol but still delivered on both eras' connections.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await ctx.log(level, message, logger_name="demo")
    return f"Logged one {level} message."


def fail(message: Annotated[str, Field(description="Error message to fail with")]) -> str:
    """Always fail with the given message; the result has isError set."""
    raise ToolError(message)


# -------------------------------------------------------------------------- task tools
# These run as tasks (mcp_notebook.demo._task_runner): the call answers at once, the work goes on, and the
# client follows it by task id. `current_task()` is the body's line to its task.


class ReportSection(BaseModel):
    """One section of a report."""

    number: int = Field(description="Section number, from 1")
    title: str = Field(description="Section title")
    text: str = Field(description="Section text")


class Report(BaseModel):
    """A report written by build_report."""

    topic: str = Field(description="What the report is about")
    sections: list[ReportSection] = Field(description="The sections, in order")
    words: int = Field(description="Words in all sections together")


def _report_facts() -> list[tuple[str, str]]:
    """(title, text) for every section a report can have: an overview, then each region and product."""
    records = _dataset()
    revenue = sum(r.units * r.price for r in records)
    facts = [
        (
            "Overview",
            f"{len(records)} sales from {records[0].date} to {records[-1].date} brought in "
            f"${revenue:,.2f} over {len(REGIONS)} regions and {len(PRODUCTS)} products.",
        )
    ]
    for region in REGIONS:
        sold = _records_for(region)
        best = Counter({p: 0 for p in sorted(PRODUCTS)})
        for r in sold:
            best[r.product] += r.units
        facts.append(
            (
                f"The {region} region",
                f"The {region} region sold {sum(r.units for r in sold)} units for "
                f"${sum(r.units * r.price for r in sold):,.2f}; its best seller was the "
                f"{best.most_common(1)[0][0]}.",
            )
        )
    for product in sorted(PRODUCTS):
        sold = [r for r in records if r.product == product]
        units = sum(r.units for r in sold)
        average = sum(r.units * r.price for r in sold) / units if units else 0.0
        facts.append(
            (
                f"The {product}",
                f"{units} {product} units sold at ${average:.2f} on average "
                f"(list price ${PRODUCTS[product]:.2f}).",
            )
        )
    return facts


async def build_report(
    topic: Annotated[str, Field(min_length=1, max_length=200, description="What the report is about")],
    sections: Annotated[int, Field(ge=1, le=20, description="Number of sections to write")] = 4,
    delay: Annotated[float, Field(ge=0, le=10, description="Seconds spent writing each section")] = 0.5,
) -> Report:
    """Write a report on `topic` from the sales data, one section at a time.

    A long-running task (task support required): while it works, the task's status message says
    which section it is writing; the finished report comes back as structured content.
    """
    task = current_task()
    facts = _report_facts()
    written: list[ReportSection] = []
    for number in range(1, sections + 1):
        await task.report(f"Writing section {number} of {sections}...")
        await anyio.sleep(delay)
        title, text = facts[(number - 1) % len(facts)]
        written.append(ReportSection(number=number, title=title, text=text))
    words = sum(len(section.text.split()) for section in written)
    return Report(topic=topic, sections=written, words=words)


class ExportForm(BaseModel):
    """Confirm the export of sales data and pick its format."""

    confirm: bool = Field(description="Go ahead with the export")
    format: Literal["csv", "json"] = Field(default="csv", description="File format of the export")


class ExportOutcome(BaseModel):
    """What confirm_export did."""

    exported: bool = Field(description="Whether the rows were exported")
    rows: int = Field(description="Rows asked for")
    format: Literal["csv", "json"] | None = Field(default=None, description="The chosen format, if exported")
    size: int | None = Field(default=None, description="Size of the export in bytes, if exported")
    preview: str | None = Field(default=None, description="The first lines of the export, if exported")
    message: str = Field(description="What happened, in words")


def _export(records: list[SaleRecord], file_format: Literal["csv", "json"]) -> str:
    if file_format == "json":
        return json.dumps([r.model_dump() for r in records], indent=2)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(SaleRecord.model_fields), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow(record.model_dump())
    return buffer.getvalue()


async def confirm_export(
    rows: Annotated[int, Field(ge=1, le=_DATASET_SIZE, description="How many sales rows to export")] = 100,
) -> ExportOutcome:
    """Export sales rows as CSV or JSON once the user confirms and picks the format in a form.

    A task (task support required) that waits in input_required until the user answers; declining
    (or not confirming) ends it without exporting.
    """
    task = current_task()
    await task.report(f"Preparing {rows} rows for export...")
    answer = await task.ask(f"Export {rows} rows of sales data? Pick a format.", ExportForm)
    if not isinstance(answer, AcceptedElicitation):
        said = "declined" if answer.action == "decline" else "cancelled"
        return ExportOutcome(exported=False, rows=rows, message=f"Not exported: the user {said} the form.")
    if not answer.data.confirm:
        return ExportOutcome(exported=False, rows=rows, message="Not exported: the user did not confirm.")
    file_format = answer.data.format
    await task.report(f"Exporting {rows} rows as {file_format.upper()}...")
    text = _export(list(_dataset()[:rows]), file_format)
    size = len(text.encode())
    return ExportOutcome(
        exported=True,
        rows=rows,
        format=file_format,
        size=size,
        preview="\n".join(text.splitlines()[:3]),
        message=f"Exported {rows} rows as {file_format.upper()} ({size} bytes).",
    )


async def sum_numbers(
    numbers: Annotated[list[float], Field(max_length=10_000, description="Numbers to add up")],
    delay: Annotated[float, Field(ge=0, le=10, description="Seconds to wait before answering")] = 0.0,
) -> float:
    """Add up a list of numbers after `delay` seconds.

    Optional task support: it runs as a task when the client asks for one, inline otherwise.
    """
    await current_task().report(f"Adding up {len(numbers)} numbers...")
    await anyio.sleep(delay)
    return math.fsum(numbers)


# ---------------------------------------------------------------------- resources


def readme() -> str:
    """What this demo server offers."""
    return README.format(
        size=_DATASET_SIZE,
        days=_DATASET_SIZE // _RECORDS_PER_DAY,
        regions=", ".join(REGIONS),
        products=", ".join(sorted(PRODUCTS)),
    )


def sales_csv() -> str:
    """The whole sales data set as CSV (header: date,region,product,units,price)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(SaleRecord.model_fields), lineterminator="\n")
    writer.writeheader()
    for record in _dataset():
        writer.writerow(record.model_dump())
    return buffer.getvalue()


def region_summary(name: str) -> str:
    """JSON summary of one region's sales: totals and a per-product breakdown."""
    region = name.strip().lower()
    if region not in REGIONS:
        raise ResourceNotFoundError(f"Unknown region {name!r}; expected one of: {', '.join(REGIONS)}")
    records = _records_for(region)
    units_by_product: Counter[str] = Counter()
    revenue_by_product: defaultdict[str, float] = defaultdict(float)
    for r in records:
        units_by_product[r.product] += r.units
        revenue_by_product[r.product] += r.units * r.price
    summary = {
        "region": region,
        "records": len(records),
        "first_date": records[0].date if records else None,
        "last_date": records[-1].date if records else None,
        "total_units": sum(units_by_product.values()),
        "total_revenue": round(sum(revenue_by_product.values()), 2),
        "by_product": {
            product: {"units": units_by_product[product], "revenue": round(revenue_by_product[product], 2)}
            for product in sorted(units_by_product)
        },
    }
    return json.dumps(summary, indent=2)


# ------------------------------------------------------------- run-time changes


class _LiveFeatures:
    """The parts of one server that change at run time: added tools and the note.

    Every change is announced in both protocol eras, because one server object may serve both:
    modern connections hear of it on their ``subscriptions/listen`` streams (the server's
    subscription bus, through the request's ``Context``), legacy ones as a plain notification on
    the connection (the session's ``send_*``). Each era ignores the other's announcement: the bus
    has no listener on a legacy connection, and the SDK drops bare change notifications on a
    modern one, so both are sent and neither can fail the tool.
    """

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.note = "empty"
        # Legacy connections that sent resources/subscribe, with their URIs. Keyed by the SDK's
        # per-connection object (a request's ServerSession is per request, its connection is not).
        self.subscribers: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()

    # --- tools

    async def add_tool(
        self,
        ctx: Context,
        name: Annotated[
            str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$", description="New tool name")
        ],
    ) -> str:
        """Register a new tool called `name` (it echoes its `text`) and announce the tools list change."""
        if self.server._tool_manager.get_tool(name) is not None:  # pyright: ignore[reportPrivateUsage]
            return f"A tool called {name!r} already exists."

        def added(text: Annotated[str, Field(description="Text to echo back")]) -> str:
            return text

        self.server.add_tool(
            added,
            name=name,
            description="Added at run time by add_tool: echoes its text.",
            structured_output=False,
        )
        await _announce(ctx.notify_tools_changed(), "tools list change (listen streams)")
        await _announce(ctx.request_context.session.send_tool_list_changed(), "tools list change (legacy)")
        return f"Added the tool {name!r}."

    async def set_note(
        self, ctx: Context, text: Annotated[str, Field(max_length=10_000, description="The note's new text")]
    ) -> str:
        """Change the `demo://note` resource and announce the update to its subscribers."""
        self.note = text
        await _announce(ctx.notify_resource_updated(NOTE_URI), "resource update (listen streams)")
        for connection, uris in list(self.subscribers.items()):
            if NOTE_URI in uris:
                await _announce(connection.send_resource_updated(NOTE_URI), "resource update (legacy)")
        return f"The note is now {len(text)} characters long."

    # --- the note resource and legacy subscriptions

    def read_note(self) -> str:
        """A short text note; `set_note` changes it."""
        return self.note

    async def on_subscribe(
        self, ctx: ServerRequestContext[Any], params: SubscribeRequestParams
    ) -> EmptyResult:
        self.subscribers.setdefault(_connection_of(ctx), set()).add(str(params.uri))
        return EmptyResult()

    async def on_unsubscribe(
        self, ctx: ServerRequestContext[Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        self.subscribers.get(_connection_of(ctx), set()).discard(str(params.uri))
        return EmptyResult()


def _connection_of(ctx: ServerRequestContext[Any]) -> Any:
    """The SDK's per-connection object behind a request (it has no public handle)."""
    return ctx.session._connection  # pyright: ignore[reportPrivateUsage]


async def _announce(sending: Any, what: str) -> None:
    """Await one era's announcement; a failure (e.g. a closed connection) is logged, not raised."""
    try:
        await sending
    except Exception:
        logger.debug("could not send the %s", what, exc_info=True)


# ------------------------------------------------------------------------ prompts


def analyze_region(
    region: Annotated[str, Field(description="Region to analyze: north, south, east or west")],
) -> list[Message]:
    """Set up an analysis of one region's sales."""
    name = region.strip().lower()
    if name not in REGIONS:
        raise ValueError(f"Unknown region {region!r}; expected one of: {', '.join(REGIONS)}")
    return [
        UserMessage(
            f"Analyze the sales of the {name} region. Read the resource demo://region/{name} for totals, "
            f'call the sales_records tool with region="{name}" for individual rows, then describe the '
            "best- and worst-selling products and any trend over time."
        )
    ]


def greeting(name: Annotated[str, Field(description="Who to greet")]) -> str:
    """Ask the model for a short, friendly greeting."""
    return f"Write a short, friendly greeting for {name}."


# --------------------------------------------------------------------- completion


async def complete_argument(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> Completion | None:
    """Complete region names for `analyze_region`'s `region` and the region template's `name`."""
    wants_region = (
        isinstance(ref, PromptReference) and ref.name == "analyze_region" and argument.name == "region"
    ) or (
        isinstance(ref, ResourceTemplateReference) and ref.uri == REGION_TEMPLATE and argument.name == "name"
    )
    if not wants_region:
        return None
    values = _matching_regions(argument.value)
    return Completion(values=values, total=len(values), has_more=False)


# ------------------------------------------------------------------------- server


LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def build_server(*, log_level: LogLevel = "WARNING") -> MCPServer:
    """Build a fresh, fully registered demo server.

    Args:
        log_level: Level for the SDK's logging, which goes to stderr. The default keeps
            the expected chatter (e.g. the INFO line for every `fail` call) out of sight.
    """
    # Tasks in both flavours (mcp_notebook.demo._task_runner): its extension must be known at construction.
    tasks = TaskRunner()
    server = MCPServer(
        SERVER_NAME,
        title="MCP Notebook demo server",
        description=(
            "Toy sales data plus tools that exercise progress, elicitation, sampling, errors and tasks."
        ),
        instructions=INSTRUCTIONS,
        version=SERVER_VERSION,
        log_level=log_level,
        extensions=[tasks.extension],
    )

    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    server.add_tool(sales_records, title="Sales records", annotations=read_only)
    server.add_tool(add, title="Add two numbers", annotations=read_only)
    server.add_tool(echo, title="Echo", annotations=read_only, structured_output=False)
    server.add_tool(slow_count, title="Slow count", annotations=read_only, structured_output=False)
    server.add_tool(ask_user_name, title="Ask for the user's name", structured_output=False)
    server.add_tool(summarize, title="Summarize text", structured_output=False)
    server.add_tool(list_roots, title="List my roots", annotations=read_only, structured_output=False)
    server.add_tool(write_log, title="Write a log message", structured_output=False)
    server.add_tool(fail, title="Always fail", annotations=read_only, structured_output=False)
    live = _LiveFeatures(server)
    server.add_tool(live.add_tool, name="add_tool", title="Add a tool at run time", structured_output=False)
    server.add_tool(live.set_note, name="set_note", title="Change the note", structured_output=False)
    tasks.add_tool(server, build_report, support="required", title="Build a report", annotations=read_only)
    tasks.add_tool(server, confirm_export, support="required", title="Export after confirming")
    tasks.add_tool(server, sum_numbers, support="optional", title="Sum numbers", annotations=read_only)
    tasks.install(server)

    server.resource("demo://readme", name="readme", title="About this server", mime_type="text/markdown")(
        readme
    )
    server.resource(
        "demo://data/sales.csv", name="sales.csv", title="Sales data (CSV)", mime_type="text/csv"
    )(sales_csv)
    server.resource(
        REGION_TEMPLATE, name="region_summary", title="Region summary (JSON)", mime_type="application/json"
    )(region_summary)
    server.resource(NOTE_URI, name="note", title="A note (subscribable)", mime_type="text/plain")(
        live.read_note
    )
    # MCPServer serves subscriptions/listen (the modern way to subscribe) but registers no
    # resources/subscribe handler, so the handshake would declare resources.subscribe false.
    lowlevel = _lowlevel(server)
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, live.on_subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, live.on_unsubscribe)
    # Whoever builds the handshake's options without notification options (the SDK's own
    # `run_stdio_async`, an in-process transport) still declares that the lists may change. The
    # options also declare the 2025-11-25 tasks capability, which the SDK knows no way to derive.
    sdk_options = lowlevel.create_initialization_options

    def create_initialization_options(
        notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        return tasks.declare(sdk_options(notification_options or NOTIFICATION_OPTIONS, *args, **kwargs))

    lowlevel.create_initialization_options = create_initialization_options  # type: ignore[method-assign]

    server.prompt(title="Analyze a region")(analyze_region)
    server.prompt(title="Greeting")(greeting)

    server.completion()(complete_argument)  # type: ignore[no-untyped-call]  # the SDK leaves it unannotated
    return server


async def serve_stdio(server: MCPServer | None = None, *, legacy_only: bool = False) -> None:
    """Serve ``server`` (default: a fresh demo server) over this process's stdin/stdout.

    By default this is the SDK's dual-era stdio run: the client's first request picks
    the protocol era (``server/discover`` with the 2026-07-28 envelope opens a modern
    connection, ``initialize`` a legacy one). With ``legacy_only`` the low-level server
    is driven by the handshake-only ``serve_loop`` instead, so only the ``initialize``
    era is served.
    """
    if server is None:
        server = build_server()
    lowlevel = _lowlevel(server)
    # Not `server.run_stdio_async()`: that builds the handshake's options without notification
    # options, so a legacy client would be told no list ever changes.
    init_options = lowlevel.create_initialization_options(NOTIFICATION_OPTIONS)
    if not legacy_only:
        async with stdio_server() as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, init_options)
        return
    # The lifespan is entered first (and so exits last), as `Server.run` does it.
    async with lowlevel.lifespan(lowlevel) as lifespan_state, stdio_server() as (read_stream, write_stream):
        await serve_loop(
            lowlevel, read_stream, write_stream, lifespan_state=lifespan_state, init_options=init_options
        )


def _lowlevel(server: MCPServer) -> Server:
    """The low-level Server inside an MCPServer.

    MCPServer has no public handle on it; the SDK's own client reaches for the same attribute
    when connecting in-process.
    """
    return server._lowlevel_server  # pyright: ignore[reportPrivateUsage]


def run_stdio(*, legacy_only: bool = False, log_level: LogLevel = "WARNING") -> None:
    """Blocking entry point: build the demo server and serve it over stdio until EOF."""
    server = build_server(log_level=log_level)
    logger.info("Serving %s over stdio (%s)", SERVER_NAME, "legacy only" if legacy_only else "dual era")
    anyio.run(functools.partial(serve_stdio, server, legacy_only=legacy_only))


# --------------------------------------------------------------------------- HTTP


HTTP_URL_PREFIX = "MCP_HTTP_URL="
"""The one line ``run_http`` prints to stdout once it accepts connections: this prefix, then the URL."""

_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def http_app(
    server: MCPServer | None = None,
    *,
    legacy_only: bool = False,
    stateless: bool = False,
    json_response: bool = False,
    sse: bool = False,
    host: str = "127.0.0.1",
    token: str | None = None,
) -> tuple[Any, str]:
    """An ASGI app serving ``server`` (default: a fresh demo server) over HTTP, and its endpoint path.

    Streamable HTTP (the default) is the SDK's own app: a request whose ``MCP-Protocol-Version``
    header names a modern version is served on the modern single-exchange path, anything else on
    the legacy session path (an ``initialize`` without a session id opens a session). With
    ``legacy_only`` a modern header is refused with ``400`` and a plain legacy JSON-RPC error body
    (not one of the modern ``-3202x`` codes), as a 2025-11-25 server answers it, so an HTTP client
    falls back to ``initialize``. ``stateless`` and ``json_response`` are the SDK's options: no
    ``Mcp-Session-Id`` (every legacy POST is served on its own) and ``application/json`` instead
    of SSE response bodies. With either, a legacy connection cannot carry server-to-client
    requests, so the elicitation and sampling tools fail there (``-32600``); the modern era does
    them as ``input_required`` round trips regardless.

    ``sse`` serves the deprecated 2024-11-05 HTTP+SSE transport instead: ``GET /sse`` opens the
    stream, whose ``endpoint`` event names the ``/messages/?session_id=...`` URL to POST to. Each
    stream is one connection, dual-era like stdio unless ``legacy_only``.

    ``token`` requires ``Authorization: Bearer <token>`` on every HTTP request (see
    :class:`_BearerToken`); without it the server is open, as before.
    """
    if server is None:
        server = build_server()
    path = "/mcp"
    app: Any
    if sse:
        app, path = _sse_app(server, legacy_only=legacy_only, host=host), "/sse"
    else:
        app = server.streamable_http_app(stateless_http=stateless, json_response=json_response, host=host)
        if legacy_only:
            app = _HandshakeEraOnly(app)
    if token is not None:
        app = _BearerToken(app, token)
    return app, path


class _BearerToken:
    """ASGI wrapper: every HTTP request must carry ``Authorization: Bearer <token>``.

    Anything else is answered ``401`` with ``WWW-Authenticate: Bearer`` (plus
    ``error="invalid_token"`` when a wrong token was sent, as RFC 6750 §3.1 says) and an OAuth-style
    JSON body that is not a JSON-RPC error, so a client reads it as an authorization failure rather
    than as the server's answer. The comparison takes constant time. Lifespan events pass through.
    """

    def __init__(self, app: Any, token: str) -> None:
        if not valid_token(token):
            raise ValueError("the token must be non-empty printable ASCII without spaces")
        self.app = app
        self._token = token.encode("ascii")

    def _accepts(self, values: list[bytes]) -> bool:
        import hmac

        if len(values) != 1:
            return False
        scheme, _, credentials = values[0].strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self._token)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        values = [value for key, value in scope["headers"] if key == b"authorization"]
        if self._accepts(values):
            await self.app(scope, receive, send)
            return
        from starlette.responses import JSONResponse

        if values:
            challenge = 'Bearer error="invalid_token", error_description="The token is not valid"'
            body = {"error": "invalid_token", "error_description": "The bearer token is not valid."}
        else:
            challenge = "Bearer"
            body = {"error": "unauthorized", "error_description": "Send Authorization: Bearer <token>."}
        response = JSONResponse(body, status_code=401, headers={"WWW-Authenticate": challenge})
        await response(scope, receive, send)


class _HandshakeEraOnly:
    """ASGI wrapper: refuse requests stamped with a modern ``MCP-Protocol-Version`` header.

    The SDK's session manager routes such requests to its modern entry before anything else, and
    offers no switch to turn that off. A legacy (2025-11-25) server validates the header against
    the versions it knows and answers ``400 Bad Request`` with a JSON-RPC error that is not a
    modern one, which is what this answers.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

            headers = dict(scope["headers"])
            version = headers.get(b"mcp-protocol-version")
            if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
                from starlette.responses import JSONResponse

                message = (
                    f"Bad Request: Unsupported protocol version: {version.decode('latin-1')}. "
                    f"Supported versions: {', '.join(HANDSHAKE_PROTOCOL_VERSIONS)}"
                )
                body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
                await JSONResponse(body, status_code=400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _local_security(host: str) -> Any:
    """DNS-rebinding protection as the SDK's own apps set it up for a server bound to localhost."""
    from mcp.server.transport_security import TransportSecuritySettings

    if host not in _LOCAL_HOSTS:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def _sse_app(server: MCPServer, *, legacy_only: bool, host: str) -> Any:
    """The 2024-11-05 HTTP+SSE transport: ``GET /sse`` streams, ``POST /messages/?session_id=``."""
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route

    lowlevel = _lowlevel(server)
    transport = SseServerTransport("/messages/", security_settings=_local_security(host))
    init_options = lowlevel.create_initialization_options(NOTIFICATION_OPTIONS)

    class SseEndpoint:
        """A raw ASGI endpoint (Starlette passes scope/receive/send straight through to it)."""

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            async with transport.connect_sse(scope, receive, send) as (read_stream, write_stream):
                if not legacy_only:
                    await lowlevel.run(read_stream, write_stream, init_options)
                    return
                async with lowlevel.lifespan(lowlevel) as lifespan_state:
                    await serve_loop(
                        lowlevel,
                        read_stream,
                        write_stream,
                        lifespan_state=lifespan_state,
                        init_options=init_options,
                    )

    return Starlette(
        routes=[
            Route("/sse", endpoint=SseEndpoint(), methods=["GET"]),
            Mount("/messages/", app=transport.handle_post_message),
        ]
    )


def _url_host(host: str) -> str:
    """The host part of a URL that reaches a server bound to ``host``."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def run_http(
    *,
    port: int = 0,
    host: str = "127.0.0.1",
    legacy_only: bool = False,
    stateless: bool = False,
    json_response: bool = False,
    sse: bool = False,
    log_level: LogLevel = "WARNING",
    token: str | None = None,
) -> None:
    """Blocking entry point: serve the demo server over HTTP until SIGINT/SIGTERM.

    Binds ``host:port`` itself (``port`` 0 picks a free one), then prints exactly one line to
    stdout, ``MCP_HTTP_URL=http://HOST:PORT/mcp`` (``/sse`` with ``sse``), once the server
    accepts connections. Everything else (logging, uvicorn's messages) goes to stderr; uvicorn's
    access log is off. See :func:`http_app` for what the options change (``token``: every request
    needs ``Authorization: Bearer <token>``; the token itself is never printed or logged).
    """
    import socket
    import sys

    import uvicorn

    server = build_server(log_level=log_level)
    app, path = http_app(
        server,
        legacy_only=legacy_only,
        stateless=stateless,
        json_response=json_response,
        sse=sse,
        host=host,
        token=token,
    )
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    url = f"http://{_url_host(host)}:{sock.getsockname()[1]}{path}"
    era = "legacy only" if legacy_only else "dual era"
    transport = "HTTP+SSE" if sse else "Streamable HTTP"
    guarded = ", bearer token required" if token is not None else ""
    logger.info("Serving %s over %s (%s%s) at %s", SERVER_NAME, transport, era, guarded, url)

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if not self.should_exit:
                sys.stdout.write(f"{HTTP_URL_PREFIX}{url}\n")
                sys.stdout.flush()

    config = uvicorn.Config(
        app,
        log_config=None,  # uvicorn's default config sends its access log to stdout
        log_level=log_level.lower(),
        access_log=False,
        lifespan="on",
        # Open SSE streams would otherwise hold a graceful shutdown open for as long as they last.
        timeout_graceful_shutdown=2,
    )
    AnnouncingServer(config).run(sockets=[sock])
