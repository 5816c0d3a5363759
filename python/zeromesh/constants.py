"""The numbers of the wire format (protocol/PROTOCOL.md): message types, statuses, features,
member states, error codes and limits. Append only: a number, once given, is never reused."""
from enum import IntEnum

SIGNATURE = b"\xa7\x5a\x4d"
HEADER_SIZE = 5
PROTOCOL_VERSION = 1
PROTOCOL_VERSION_MIN = 1
PROTOCOL_VERSION_MAX = 1
MAX_ID = 2**53 - 1


class MessageType(IntEnum):
    REQUEST = 1
    REPLY = 2
    PING = 3
    PONG = 4
    ERROR = 5
    PROBE = 6
    ACK = 7
    PROBE_REQ = 8
    NACK = 9
    SYNC = 10
    MEMBERS_GET = 11
    MEMBERS = 12
    CANCEL = 13
    SEALED = 14
    SERVICE_GET = 15
    SERVICE = 16
    KEY_PROOF = 17
    STREAM_OPEN = 18
    STREAM_ITEM = 19
    STREAM_CREDIT = 20
    STREAM_END = 21
    EVENT = 22


class Status(IntEnum):
    OK = 0
    UNKNOWN_METHOD = 1
    REMOTE = 2
    BUSY = 3
    DRAINING = 4
    INVALID_REQUEST = 5


class MemberState(IntEnum):
    ALIVE = 0
    SUSPECT = 1
    DEAD = 2
    LEFT = 3


class ProtocolErrorCode(IntEnum):
    UNSUPPORTED_VERSION = 1
    UNKNOWN_TYPE = 2


class Feature(IntEnum):
    STREAMS = 1
    EVENTS = 2


GOSSIP_NAMES = {
    MessageType.PROBE: "probe",
    MessageType.ACK: "ack",
    MessageType.PROBE_REQ: "probe-req",
    MessageType.NACK: "nack",
    MessageType.SYNC: "sync",
}


class Limits:
    """The defaults of PROTOCOL.md 3.3 (a receiver MAY lower or raise them)."""

    max_message_size = 1048576
    max_batch = 1024
    max_depth = 64
    max_method_length = 256
    max_meta_bytes = 512
    max_meta_depth = 8
    max_claims = 65535
    max_methods = 1024
    max_version_length = 64
    max_labels = 32
    max_headers = 32
    max_header_chars = 8192
    max_header_value = 4096
    max_event_length = 256


INCARNATION_HORIZON_MS = 86_400_000
