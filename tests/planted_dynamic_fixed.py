"""The clean twin of tests/planted_misnamed_dynamic.py: dynamic_args names the case parameter `N`."""

from tests.planted_misnamed_dynamic import SPECS_FIXED as SPECS

__all__ = ["SPECS"]
