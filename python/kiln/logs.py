"""Kiln's logger, ``kiln``: one prefix per line.

Messages carry no prefix of their own; the logging configuration names the
logger (``WARNING:kiln:...`` under ``logging.basicConfig``). Where nothing is
configured, Python prints warnings bare (its last-resort handler): Kiln's
own fallback prints them as ``kiln: <message>`` instead, and stays silent
once any handler would print them.
"""

import logging
import sys

__all__ = ["log"]

log = logging.getLogger("kiln")


def _configured(logger: logging.Logger, own: logging.Handler) -> bool:
    """Whether a handler other than `own` would print `logger`'s records."""
    while logger is not None:
        if any(handler is not own for handler in logger.handlers):
            return True
        if not logger.propagate:
            return False
        logger = logger.parent
    return False


class _Unconfigured(logging.Handler):
    """Prints warnings and errors as ``kiln: <message>`` on the current
    standard error while logging is not configured."""

    def __init__(self):
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        if _configured(log, self):
            return
        try:
            sys.stderr.write(f"kiln: {self.format(record)}\n")
        except Exception:  # As logging's own handlers: never raise.
            self.handleError(record)


if not any(isinstance(handler, _Unconfigured) for handler in log.handlers):
    log.addHandler(_Unconfigured())
