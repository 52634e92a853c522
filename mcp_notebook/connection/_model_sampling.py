"""A model object as a ``sampling=`` handler: a pydantic-ai ``Model`` or a LangChain chat model.

Why: people who try servers in a notebook already hold a model for their agent; a server's
``sampling/createMessage`` can be answered by it without writing a handler. Which framework an object
belongs to is told by the names of its classes (``pydantic_ai.models.Model``,
``langchain_core.language_models.chat_models.BaseChatModel`` somewhere in its MRO), so a client that
is given a plain function never imports either framework; the adapter of the one given
(``_sampling_pydantic_ai``, ``_sampling_langchain``) is imported only then, and it imports its
framework.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["SamplingModel", "framework_of", "model_name", "model_sampler"]

#: A pydantic-ai ``Model`` or a LangChain ``BaseChatModel``, as ``sampling=`` takes it (Any: neither
#: framework is imported to name its type).
SamplingModel = Any

#: (module, class) of each framework's model base, and the framework's name.
_BASES = {
    ("pydantic_ai.models", "Model"): "pydantic-ai",
    ("langchain_core.language_models.chat_models", "BaseChatModel"): "langchain",
}


def framework_of(obj: Any) -> str | None:
    """ "pydantic-ai" or "langchain" when ``obj`` is a model of that framework, else None; imports
    neither (only the names of ``obj``'s classes are read)."""
    for cls in type(obj).__mro__:
        framework = _BASES.get((cls.__module__, cls.__qualname__))
        if framework is not None:
            return framework
    return None


def _adapter(obj: Any) -> Any:
    """The adapter module for ``obj``'s framework (imported now), or None when it is no known model."""
    framework = framework_of(obj)
    if framework == "pydantic-ai":
        from . import _sampling_pydantic_ai

        return _sampling_pydantic_ai
    if framework == "langchain":
        from . import _sampling_langchain

        return _sampling_langchain
    return None


def model_sampler(obj: Any) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None:
    """A ``sampling/createMessage`` handler asking ``obj``, when it is a model of a known framework
    (else None: ``obj`` is taken as it is, a handler function or a mistake)."""
    adapter = _adapter(obj)
    return None if adapter is None else adapter.sampler(obj)


def model_name(obj: Any) -> str | None:
    """The name a model object gives itself (the answer's ``model``), or None when it is no model."""
    adapter = _adapter(obj)
    return None if adapter is None else adapter.name_of(obj)
