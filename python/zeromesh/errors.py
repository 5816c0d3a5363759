"""Errors with the stable codes the Node client and peer use (docs/reference/errors.md):
match on `code`, never on the message. `retryable` says whether trying again (elsewhere)
makes sense."""
from __future__ import annotations


class ZeromeshError(Exception):
    code = "ERR_ZEROMESH"
    retryable = False

    def __init__(self, message: str = "", *, code: str | None = None, retryable: bool | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if retryable is not None:
            self.retryable = retryable


class TimeoutError_(ZeromeshError):
    code = "ERR_ZEROMESH_TIMEOUT"
    retryable = True


class NoPeersError(ZeromeshError):
    code = "ERR_ZEROMESH_NO_PEERS"
    retryable = True


class UnknownMethodError(ZeromeshError):
    code = "ERR_ZEROMESH_UNKNOWN_METHOD"


class RemoteError(ZeromeshError):
    """The handler threw: its message, and its own code as `remote_code`."""

    code = "ERR_ZEROMESH_REMOTE"

    def __init__(self, message: str = "", remote_code: str | None = None):
        super().__init__(message)
        self.remote_code = remote_code


class BusyError(ZeromeshError):
    code = "ERR_ZEROMESH_BUSY"
    retryable = True


class DrainingError(ZeromeshError):
    code = "ERR_ZEROMESH_DRAINING"
    retryable = True


class ClosedError(ZeromeshError):
    code = "ERR_ZEROMESH_CLOSED"


class InvalidArgumentError(ZeromeshError, ValueError):
    code = "ERR_ZEROMESH_INVALID_ARGUMENT"


class ConnectionLostError(ZeromeshError):
    code = "ERR_ZEROMESH_CONNECTION_LOST"


class ProtocolError(ZeromeshError):
    code = "ERR_ZEROMESH_PROTOCOL"

    def __init__(self, message: str = "", protocol_code: int | None = None):
        super().__init__(message)
        self.protocol_code = protocol_code


# The name Python users expect, beside the builtin it would shadow.
ZeromeshTimeoutError = TimeoutError_

# REMOTE codes a peer itself produces (PROTOCOL.md 4.2.2).
REMOTE_ENCODE = "ERR_ZEROMESH_ENCODE"
REMOTE_TOO_LARGE = "ERR_ZEROMESH_TOO_LARGE"
REMOTE_WORKER_EXIT = "ERR_ZEROMESH_WORKER_EXIT"
