# SPDX-License-Identifier: GPL-2.0-or-later
"""What the tests of tests/cli share: checks that go on after a failure and
are counted, so one run reports every failed check."""

FAILED = []


def check(cond, what):
    """cond, having printed and counted what when it is false."""
    if not cond:
        FAILED.append(what)
        print("FAIL " + what)
    return cond


def result():
    """The test's exit code: 1 after a failed check, else 0."""
    if FAILED:
        print("%d check(s) failed" % len(FAILED))
        return 1
    return 0
