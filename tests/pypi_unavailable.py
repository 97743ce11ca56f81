"""What a test that needs PyPI does without it: skip (ctest's exit 77, a "skipped:" line), or fail
when ATTN_VIZ_REQUIRE_PYPI=1 says the package index must be there."""
import os
import sys


def unavailable(reason):
    if os.environ.get("ATTN_VIZ_REQUIRE_PYPI") == "1":
        print(f"error: {reason} (required: ATTN_VIZ_REQUIRE_PYPI=1)")
        sys.exit(1)
    print(f"skipped: {reason}")
    sys.exit(77)
