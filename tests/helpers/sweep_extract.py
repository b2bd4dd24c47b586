"""`extract` functions for sweep tests."""

import os


def abort_on_123_requests(result):
    """Kill the process (SIGABRT) on the point that completes 123 requests, while the file named
    by FABRICSIM_TEST_ABORT_FILE exists."""
    marker = os.environ.get("FABRICSIM_TEST_ABORT_FILE")
    if result.summary["requests"]["completed"] == 123 and marker and os.path.exists(marker):
        os.abort()
    return {}
