"""Kiln's logger, ``kiln``: one prefix per line.

Messages carry no prefix of their own; the logging configuration names the
logger (``WARNING:kiln:...`` under ``logging.basicConfig``). Where nothing is
configured, Python prints warnings bare (its last-resort handler): Kiln's
own fallback prints them as ``kiln: <message>`` instead, and stays silent
once any handler would print them.

``KILN_LOG=debug|info|warning|error`` sets the logger's level and prints its
records at that level and above as ``kiln: <message>`` on standard error
(``info``: each graph's regions as they compile, and its report; ``debug``
adds each artifact's cache hit or compile time). On torch 2.x the logger is
also registered with ``torch._logging`` as ``kiln``, so that
``TORCH_LOGS="kiln"`` (INFO) or ``TORCH_LOGS="+kiln"`` (DEBUG) turn it on
like PyTorch's own.
"""

import logging
import os
import sys

__all__ = ["log", "register_with_torch"]

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


class _Stderr(logging.Handler):
    """Prints records as ``kiln: <message>`` on the current standard error
    (KILN_LOG's handler)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(f"kiln: {self.format(record)}\n")
        except Exception:  # As logging's own handlers: never raise.
            self.handleError(record)


class _Unconfigured(_Stderr):
    """Prints warnings and errors while logging is not configured."""

    def __init__(self):
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        if not _configured(log, self):
            super().emit(record)


if not any(isinstance(handler, _Unconfigured) for handler in log.handlers):
    log.addHandler(_Unconfigured())


def _apply_kiln_log(value: str) -> None:
    """Sets the logger's level from KILN_LOG's `value` and prints what it
    lets through; an unknown level is reported once and ignored."""
    level = logging.getLevelName(value.strip().upper())
    if not isinstance(level, int):
        sys.stderr.write(f"kiln: KILN_LOG={value!r} is not a level (debug, info, warning, "
                         "error); ignored\n")
        return
    log.setLevel(level)
    if not any(type(handler) is _Stderr for handler in log.handlers):
        log.addHandler(_Stderr())
    # Printed once, by this handler, not again by the root logger's.
    log.propagate = False


def register_with_torch() -> None:
    """Lets TORCH_LOGS name the logger (torch 2.x), where torch allows it;
    the backend calls it (it imports torch, which kiln.logs does not)."""
    try:
        from torch._logging._internal import register_log
    except ImportError:  # torch 1.x: KILN_LOG only.
        return
    try:
        register_log("kiln", "kiln")
    except Exception:  # An already registered name, or a changed API.
        pass


if os.environ.get("KILN_LOG"):
    _apply_kiln_log(os.environ["KILN_LOG"])
