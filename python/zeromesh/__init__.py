"""zeromesh for Python: a peer that joins a zeromesh mesh and serves Python functions, and a
client that balances over its peers and fails over (docs/guides/python.md). It implements
protocol/PROTOCOL.md and nothing else."""
from ._version import __version__
from .errors import (
    BusyError,
    ClosedError,
    ConnectionLostError,
    DrainingError,
    InvalidArgumentError,
    NoPeersError,
    ProtocolError,
    RemoteError,
    UnknownMethodError,
    ZeromeshError,
    ZeromeshTimeoutError,
)

__all__ = [
    "BusyError", "ClosedError", "ConnectionLostError", "DrainingError", "InvalidArgumentError",
    "NoPeersError", "ProtocolError", "RemoteError", "UnknownMethodError", "ZeromeshError",
    "ZeromeshTimeoutError", "__version__",
]
