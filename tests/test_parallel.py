"""How the suite splits across xdist workers (tests/parallel.py): the serial scope and the order."""

from __future__ import annotations

from pathlib import Path

from .parallel import HEAVY, SERIAL_SCOPE, longest_first, scope_of

ROOT = Path(__file__).resolve().parent.parent


def test_the_real_clock_files_share_one_scope_and_the_rest_keep_their_own() -> None:
    assert scope_of("tests/test_soak.py::test_x") == SERIAL_SCOPE
    assert scope_of("tests/test_call_deadline.py::test_y[a::b]") == SERIAL_SCOPE
    assert scope_of("tests/test_binder.py::test_z") == "tests/test_binder.py"
    assert scope_of("tests/test_soak_free.py::test_z") == "tests/test_soak_free.py"


def test_the_heavy_files_go_first_longest_first_and_the_rest_keep_their_order() -> None:
    queue = ["tests/test_a.py", "tests/test_front_door.py", "tests/test_b.py", "tests/test_binder.py"]
    queue.append(SERIAL_SCOPE)
    assert longest_first(queue) == [
        SERIAL_SCOPE,
        "tests/test_binder.py",
        "tests/test_front_door.py",
        "tests/test_a.py",
        "tests/test_b.py",
    ]


def test_every_heavy_file_exists() -> None:
    """A renamed file would silently lose its place at the front."""
    missing = [scope for scope in HEAVY if scope != SERIAL_SCOPE and not (ROOT / scope).is_file()]
    assert not missing, missing
