"""The Jupyter layer: the ``%mcp`` magics (and, with issue #27, the widget-opening Session and Group)."""
