"""The Sluice transport's client side in Python, written from docs/protocol.md (protocol 7).

* :mod:`.frames`: the frame header and every payload layout, in one place.
* :mod:`.handshake`: HELLO/CHALLENGE/AUTH/AUTH_OK, X25519 + Ed25519 + HKDF.
* :mod:`.records`: the record layer: mac and aead modes, each direction's keys stepping every 2^20 frames.
* :mod:`.connection`: a blocking client connection with deadlines: REQUEST/RESPONSE, CONTROL, and
  single and batched READs straight into caller-owned memory.
* :mod:`.shm`: a same-host server's regions mapped read-only through the shm control service.

There is no server here, and no verbs: a server that offers only verbs is READ over tcp.
"""

from ._connection import Connection, ReadRange, connect  # noqa: F401
from ._handshake import NodeIdentity

__all__ = ["Connection", "ReadRange", "connect", "NodeIdentity"]
