import marimo

__generated_with = "0.24.0"
app = marimo.App(width="medium")


@app.cell
def _():
    import sys

    import marimo as mo

    import mcp_notebook

    return mcp_notebook, mo, sys


@app.cell
def _(mo):
    mo.md(
        """
        # mcp-notebook in marimo

        A session on the bundled demo server: its tools, a call, a DataFrame, and the session's
        panels. marimo has no `%mcp` magics; each has a function (`mcp_notebook.servers()`,
        `mcp_notebook.use(...)`, ...: see the README's table). Run this cell again, or change
        it: marimo re-runs the cells below, and `connect()` gives the same session back instead
        of starting a second server.
        """
    )
    return


@app.cell
def _(mcp_notebook, sys):
    demo = mcp_notebook.connect([sys.executable, "-m", "mcp_notebook.demo"])
    demo  # a status card
    return (demo,)


@app.cell
def _(demo):
    demo.tools_frame()[["name", "title", "description"]]
    return


@app.cell
def _(demo):
    total = demo.call_tool("add", {"a": 1.5, "b": 2})
    total
    return (total,)


@app.cell
def _(demo):
    sales = demo.call_tool("sales_records", {"region": "north", "limit": 5}).to_dataframe()
    sales
    return (sales,)


@app.cell
def _(demo, mo):
    mo.vstack([demo.status_widget(), demo.explorer(), demo.dashboard()])
    return


@app.cell
def _(mcp_notebook, sales, total):
    servers = mcp_notebook.servers()
    summary = f"add gave {total.data['result']}; {len(sales)} sales rows; {len(servers)} session(s) open"
    summary
    return


if __name__ == "__main__":
    app.run()
