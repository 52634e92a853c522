"""The pictures: escaping, table inference, text and HTML reprs, DataFrame conversion.

This layer sits just above ``protocol/`` and imports nothing else from the package: the result
types in ``client/`` draw themselves with it. pandas is imported inside the DataFrame functions
only, so ``import mcp_notebook`` stays light.
"""
