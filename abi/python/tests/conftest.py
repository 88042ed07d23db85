"""The pytest suite of renewable_huber_kokkos (abi/python/tests), run by ctest as python_<space> (tests/CMakeLists.txt)
on the library of the build (RH_LIBRARY). RH_TEST_SPACE picks the execution space; unset, every compiled one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import renewable_huber_kokkos as rk

REPO = Path(__file__).resolve().parents[3]


def spaces_under_test() -> list[str]:
    compiled = rk.compiled_spaces()
    wanted = os.environ.get("RH_TEST_SPACE")
    if wanted:
        assert wanted in compiled, f"RH_TEST_SPACE={wanted} is not compiled into {rk.load_library().path}"
        return [wanted]
    return compiled


def pytest_generate_tests(metafunc):
    if "space" in metafunc.fixturenames:
        metafunc.parametrize("space", spaces_under_test())
    if "penalty" in metafunc.fixturenames:  # every penalty the library knows (rh_penalty_name)
        metafunc.parametrize("penalty", list(rk.load_library().penalty_values))


def pytest_report_header(config):
    lib = rk.load_library()
    return f"renewable-huber library {lib.version} at {lib.path}; spaces under test: {spaces_under_test()}"


# Worst fraction of the tolerance per space and corpus, printed at the end (the golden replay records into it).
GOLDEN_WORST: dict[tuple[str, str], tuple[float, str]] = {}


def pytest_terminal_summary(terminalreporter):
    if not GOLDEN_WORST:
        return
    terminalreporter.section("golden corpora through the Python API: worst |diff| / tolerance")
    for (space, corpus), (worst, where) in sorted(GOLDEN_WORST.items()):
        terminalreporter.write_line(f"{space:7} {corpus:22} {worst:.3g}  ({where})")


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(20240530)
