"""Which human step signs a person in: ``OAuth(flow="auto")``'s rule, and the signals it reads.

Why a rule: the loopback redirect works only when the browser runs on the kernel's machine. Where
it cannot (a hosted or remote kernel) the sign-in would wait for a redirect that never comes, so
"auto" picks a flow that needs no way back into the kernel: the device grant when the
authorization server offers one, else paste-back. The signals are environment variables the
hosts set, so the rule is pure (the environment is passed in) and tested as a table.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["FLOWS", "SIGNALS", "SignInFlow", "browser_elsewhere", "choose_flow", "in_jupyter_kernel"]

SignInFlow = Literal["auto", "loopback", "paste", "device"]
FLOWS: tuple[SignInFlow, ...] = ("auto", "loopback", "paste", "device")

#: Environment variables that say the person's browser is on another machine, and where we are.
SIGNALS: tuple[tuple[str, str], ...] = (
    ("COLAB_RELEASE_TAG", "Google Colab"),
    ("KAGGLE_KERNEL_RUN_TYPE", "Kaggle"),
    ("BINDER_LAUNCH_HOST", "Binder"),
    ("JUPYTERHUB_SERVICE_PREFIX", "JupyterHub"),
    ("JUPYTERHUB_USER", "JupyterHub"),
    ("CODESPACES", "GitHub Codespaces"),
    ("SSH_CONNECTION", "SSH"),
    ("SSH_CLIENT", "SSH"),
    ("SSH_TTY", "SSH"),
)


def in_jupyter_kernel() -> bool:
    """True inside a running Jupyter kernel (an IPython shell with a kernel), never importing
    IPython: the core stays light. (The notebook layer's ``_uipoll.in_kernel`` is the same test;
    the core cannot import it.) Merely having ``ipykernel`` imported does not count."""
    ipython: Any = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
    except Exception:
        return False
    return getattr(shell, "kernel", None) is not None


def browser_elsewhere(environ: Mapping[str, str], *, platform: str, in_kernel: bool) -> str | None:
    """Where we are when the person's browser cannot reach this machine's loopback, else None.

    Besides :data:`SIGNALS`: a Jupyter kernel (``in_kernel``) on Linux with no display (neither
    ``DISPLAY`` nor ``WAYLAND_DISPLAY``) has its notebook open in a browser elsewhere, since none
    can run here."""
    for name, where in SIGNALS:
        if environ.get(name):
            return where
    if (
        platform.startswith("linux")
        and in_kernel
        and not environ.get("DISPLAY")
        and not environ.get("WAYLAND_DISPLAY")
    ):
        return "a Jupyter kernel on a machine without a display"
    return None


def choose_flow(
    flow: SignInFlow, *, elsewhere: str | None, device_offered: bool, listens_for_redirect: bool
) -> SignInFlow:
    """The flow to run: ``flow`` unless it is "auto".

    "auto": the loopback flow when the browser is on this machine (``elsewhere`` is None) or when
    ``redirect_uri=`` names where this process listens (a proxy the browser reaches:
    ``listens_for_redirect``); else the device grant when the authorization server advertises
    ``device_authorization_endpoint``; else paste-back."""
    if flow != "auto":
        return flow
    if elsewhere is None or listens_for_redirect:
        return "loopback"
    return "device" if device_offered else "paste"
