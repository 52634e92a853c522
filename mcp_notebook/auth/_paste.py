"""Paste-back sign-in: the person signs in in any browser and pastes back where it landed.

Why: the loopback redirect needs the browser on the kernel's machine. On Colab, JupyterHub, Binder
or a kernel over SSH the browser is on the person's laptop, where the redirect to
``http://127.0.0.1:PORT/callback`` cannot load. The address it failed to load still carries the
code, the ``state`` and the ``iss``: pasted back, it is what ``on_authorize`` would have returned,
and it gets the same checks (``iss``, then ``state``) before the code is exchanged with the PKCE
verifier. A bare code can be pasted too (some pages show only the code): then there is no
``state`` or ``iss`` to check, and PKCE alone binds the code to this request (a code issued for
another request fails at the token endpoint).

Who asks is pluggable: a terminal gets :func:`terminal_prompt` (a printed link and a ``getpass``
prompt, so the pasted address is not echoed and not kept in any history); a notebook session
plugs in its widget with :meth:`OAuth.paste_with <mcp_notebook.auth.OAuth.paste_with>`.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..protocol._errors import McpError
from ._policy import parse_redirect

__all__ = ["PastePrompt", "SignInLink", "paste_answer", "terminal_prompt"]

_MAX_PASTE = 16 * 1024  # an address bar holds far less; anything longer is not a redirect
_NOT_IN_A_CODE = frozenset("?&=#/ \t\r\n")


@dataclass(frozen=True)
class SignInLink:
    """What the person is shown: the server to sign in to, the authorization link, and the
    redirect address the browser will land on (which may not load). No secret in it: the link
    carries the state and the PKCE challenge, never the verifier."""

    server_url: str
    url: str
    redirect_uri: str


#: Shows a :class:`SignInLink` and returns what the person pasted (sync: run in a worker thread).
PastePrompt = Callable[[SignInLink], Awaitable[str] | str]


def terminal_prompt(link: SignInLink) -> str:
    """The terminal's paste-back: the link on stderr, then a prompt that does not echo."""
    print(
        f"To authorize access to {link.server_url}, open this URL in a browser (on any machine):\n\n"
        f"  {link.url}\n\n"
        f"After you sign in, the browser goes to {link.redirect_uri}?code=... and that page may not "
        "load. Copy its whole address from the address bar (or just the code) and paste it below; "
        "it is not shown.",
        file=sys.stderr,
        flush=True,
    )
    try:
        return getpass.getpass("Address the browser landed on: ")
    except EOFError:  # no terminal and stdin closed: nobody can paste here
        raise McpError(
            "auth",
            "the sign-in needs the address pasted back, but stdin is closed (no terminal here); "
            "run this where a person can paste, or pass on_authorize= to supply the redirect yourself",
        ) from None


def paste_answer(pasted: object, *, expected_state: str, issuer: str) -> dict[str, str]:
    """The redirect's parameters from what was pasted: a whole address, its query, or a bare code.

    Never puts the pasted text in an error: it holds a code."""
    if not isinstance(pasted, str):
        raise McpError("auth", "the paste-back prompt must return the pasted address as a string")
    text = pasted.strip()
    if not text:
        raise McpError("auth", "nothing was pasted: the sign-in was not completed")
    if len(text) > _MAX_PASTE:
        raise McpError(
            "auth", f"the pasted text is longer than {_MAX_PASTE} characters: not a redirect address"
        )
    if not (_NOT_IN_A_CODE & set(text)):
        # A bare code: nothing to compare, so the expected values stand in (see the module doc).
        return {"code": text, "state": expected_state, "iss": issuer}
    return parse_redirect(text)
