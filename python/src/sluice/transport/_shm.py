"""A same-host server's regions, mapped read-only (``io.sluice.transport._shm.ShmPeer``,
``ShmFiles``): the shm control service names the server's arena and its token; the arena is
trusted only if it is a folder of this OS user with mode 0700 reached without links, holding a
``token`` file with that token and a ``slots`` revocation table. Each key's backing file is then
mapped once (read-only, ``mmap``) and handed out as read-only memoryviews: no copy. A region
whose file lies outside the arena (a registered file) is not mapped: this side trusts no file
roots, so it is READ over the connection, as the Java reader does with no trusted roots.

A view keeps its mapping alive (the mmap is unmapped when the last view of it goes); a view is
handed out only while the region's revocation slot still holds its key. Not thread safe.
"""

from __future__ import annotations

import logging
import mmap
import os
import stat
import struct
import sys
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from ..errors import (
    ProtocolException,
    ReadOutOfBoundsException,
    RegionRevokedException,
    TransportUnavailableException,
)
from . import _frames as frames
from ._connection import Connection

__all__ = ["ShmPeer", "attach"]

_log = logging.getLogger("sluice.transport._shm")

SLOTS = 1 << 17
TOKEN_FILE = "token"
SLOTS_FILE = "slots"
_SLOT = struct.Struct("<q" if sys.byteorder == "little" else ">q")  # the owner writes native order


def _check_arena(directory: str) -> None:
    """A folder of this user, mode 0700, an absolute path free of links (ShmFiles.checkArena)."""
    if not os.path.isabs(directory) or os.path.normpath(directory) != directory or os.path.realpath(directory) != directory:
        raise OSError(f"shm arena {directory} is not an absolute path free of links")
    st = os.lstat(directory)
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(f"shm arena {directory} is not a directory")
    if st.st_uid != os.getuid():
        raise OSError(f"shm arena {directory} belongs to user {st.st_uid}, not to this process's user {os.getuid()}")
    if stat.S_IMODE(st.st_mode) != 0o700:
        raise OSError(f"shm arena {directory} has mode {oct(stat.S_IMODE(st.st_mode))}, expected 0o700")


def _open_in_arena(arena: str, path: str) -> int:
    """Opens a file named directly in the arena, a regular file of this user that nobody else may
    access, without following links, checked to be the file that was checked (ShmFiles.openInArena)."""
    if not os.path.isabs(path) or os.path.normpath(path) != path or os.path.dirname(path) != arena:
        raise OSError(f"{path} is not a file of the peer's shm arena {arena}")
    before = os.lstat(path)
    if not stat.S_ISREG(before.st_mode):
        raise OSError(f"{path} in the peer's shm arena is not a regular file")
    if before.st_uid != os.getuid():
        raise OSError(f"{path} belongs to user {before.st_uid}, not to this process's user {os.getuid()}")
    if stat.S_IMODE(before.st_mode) & 0o077:
        raise OSError(f"{path} in the peer's shm arena is accessible to other users ({oct(stat.S_IMODE(before.st_mode))})")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise OSError(f"{path} was replaced while it was opened")
    return fd


@dataclass
class _Mapping:
    """One key's region: the read-only mmap (None when the region is READ over the connection)."""

    key: int
    slot: int
    length: int
    view: Optional[memoryview]  # the region's bytes within the mapping


class ShmPeer:
    """The server's arena as this process sees it; made by :func:`attach`."""

    def __init__(self, connection: Connection, arena: str, slots: mmap.mmap) -> None:
        self._connection = connection
        self.arena = arena
        self._slots = slots
        self._mappings: Dict[int, _Mapping] = {}

    def reaches(self, key: int, timeout: Optional[float] = None) -> bool:
        """Whether region ``key`` is mapped (asking the server where it lives the first time);
        False when it is to be READ over the connection."""
        return self._mapping(key, timeout).view is not None

    def view(self, key: int, offset: int, length: int, timeout: Optional[float] = None) -> memoryview:
        """A read-only view of ``length`` bytes of region ``key`` from ``offset``; it keeps the
        mapping alive. Raises RegionRevokedException once the server revoked the region."""
        m = self._mapping(key, timeout)
        if m.view is None:
            raise TransportUnavailableException(f"region {key:x} is not mapped here; READ it")
        if offset < 0 or length < 0 or offset + length > m.length:
            raise ReadOutOfBoundsException(f"view [{offset}, +{length}) outside region of {m.length} bytes")
        if not self.is_live(m.key, m.slot):
            self._mappings.pop(key, None)
            raise RegionRevokedException("region was revoked by its owner")
        return m.view[offset : offset + length]

    def is_live(self, key: int, slot: int) -> bool:
        return _SLOT.unpack_from(self._slots, slot * 8)[0] == key

    def _mapping(self, key: int, timeout: Optional[float]) -> _Mapping:
        m = self._mappings.get(key)
        if m is None:
            m = self._open(key, timeout)
            self._mappings[key] = m
        return m

    def _open(self, key: int, timeout: Optional[float]) -> _Mapping:
        try:
            where = frames.decode_shm_location(self._connection.control(frames.SHM_SERVICE, frames.shm_open(key), timeout))
        except TransportUnavailableException:
            return _Mapping(key, 0, 0, None)
        if where.slot >= SLOTS or where.length > 0x7FFFFFFF:
            raise ProtocolException("shm REGION out of range")
        if os.path.dirname(where.path) != self.arena:
            _log.debug("region %x lies in %s, outside the arena: READ over the connection", key, where.path)
            return _Mapping(key, where.slot, where.length, None)
        try:
            fd = _open_in_arena(self.arena, where.path)
        except FileNotFoundError:
            raise RegionRevokedException(f"the peer's backing file is gone: {where.path}") from None
        except OSError as e:
            raise ProtocolException(f"refused the peer's shm region: {e}") from None
        try:
            if os.fstat(fd).st_size < where.file_offset + where.length:
                raise RegionRevokedException("the peer's backing file is shorter than the registered region")
            if where.length == 0:
                return _Mapping(key, where.slot, 0, memoryview(b""))
            start = where.file_offset - where.file_offset % mmap.ALLOCATIONGRANULARITY
            mapped = mmap.mmap(fd, where.file_offset - start + where.length, access=mmap.ACCESS_READ, offset=start)
        finally:
            os.close(fd)  # the mapping stays valid without the descriptor
        skip = where.file_offset - start
        return _Mapping(key, where.slot, where.length, memoryview(mapped)[skip : skip + where.length].toreadonly())

    def close(self) -> None:
        """Forgets every mapping; each is unmapped once no view of it is left."""
        self._mappings.clear()


def attach(connection: Connection, timeout: Optional[float] = None) -> Tuple[Optional[ShmPeer], str]:
    """Asks the server for its arena and checks this process may trust it. Returns the peer, or
    None and why (the server has no shm, it lives on another host, or its folder is not ours):
    READs then go over the connection."""
    try:
        info = frames.decode_shm_info(connection.control(frames.SHM_SERVICE, frames.shm_hello(), timeout))
    except TransportUnavailableException:
        return None, "the server offers no shm"
    try:
        _check_arena(info.directory)
        fd = _open_in_arena(info.directory, os.path.join(info.directory, TOKEN_FILE))
        try:
            token = os.pread(fd, frames.SHM_TOKEN_LENGTH + 1, 0)
        finally:
            os.close(fd)
        if token != info.token:
            return None, f"the server's shm arena {info.directory} holds another token (another host's folder)"
        fd = _open_in_arena(info.directory, os.path.join(info.directory, SLOTS_FILE))
        try:
            if os.fstat(fd).st_size != SLOTS * 8:
                return None, f"the server's slot table in {info.directory} has the wrong size"
            slots = mmap.mmap(fd, SLOTS * 8, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
    except (OSError, ValueError) as e:
        return None, f"the server's shm arena is not this process's to trust: {e}"
    return ShmPeer(connection, info.directory, slots), ""
