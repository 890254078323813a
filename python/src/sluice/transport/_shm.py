"""A same-host server's regions, mapped read-only (``io.sluice.transport.shm.ShmPeer``,
``ShmFiles``): the shm control service names the server's arena and its token; the arena is
trusted only if it is a folder of this OS user with mode 0700 reached without links, holding a
``token`` file with that token and a ``slots`` revocation table. Each key's backing file is then
opened and mapped once (read-only, ``mmap``), and its bytes are handed out as read-only
memoryviews (:meth:`ShmPeer.view`: no copy) or copied out with positional reads
(:meth:`ShmPeer.positional`). A region the server allocated as a sealed memfd is named by the
server's ``/proc/<pid>/fd/<n>`` entry: it is opened through it only if the pid is the arena's owner,
it reaches a regular file of this user whose memfd name carries the arena's token, and its seals
(``F_GET_SEALS``) include ``F_SEAL_SHRINK``; one that is not there (a reader in another pid
namespace), not this process's to open, or fails a check is READ over the connection. A region
whose file lies outside the arena (a registered file) is not mapped: this side trusts no file
roots, so it is READ over the connection, as the Java reader does with no trusted roots.

A view keeps its mapping alive (the mmap is unmapped when the last view of it goes); a view is
handed out only while the region's revocation slot still holds its key. Not thread safe.

A same-user peer can truncate its files, and a read of a mapping past its file's end is a SIGBUS
that kills the process. So this module never reads a mapping itself: the slots table is read with
``os.pread`` on a descriptor kept open (a short read raises), a copy is ``os.preadv`` of the
region's file (a short read raises :class:`RegionTruncatedException`), and each region keeps its
file's descriptor, whose size (``os.fstat``) must still cover the region every time a view is
handed out or a copy begins. A view already handed to the application reads the mapping directly,
where a truncation after that check would fault; so views are handed out only of sealed memfds,
which no process can shrink (:meth:`ShmPeer.sealed`), and the Flight reader copies bodies of
regions that are files even with ``zero_copy`` on.
"""

from __future__ import annotations

import fcntl
import logging
import mmap
import os
import re
import stat
import struct
import sys
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from ..errors import (
    PeerClosedException,
    ProtocolException,
    ReadOutOfBoundsException,
    RegionRevokedException,
    RegionTruncatedException,
    TransportUnavailableException,
)
from . import _frames as frames
from ._connection import Connection

__all__ = ["FileRange", "ShmPeer", "attach"]

_log = logging.getLogger("sluice.transport._shm")

SLOTS = 1 << 17
TOKEN_FILE = "token"
SLOTS_FILE = "slots"
_SLOT = struct.Struct("<q" if sys.byteorder == "little" else ">q")  # the owner writes native order
_PROC_FD = re.compile(r"/proc/(\d+)/fd/(\d+)")
_ARENA = re.compile(r"sluice-(\d+)-[0-9a-f]+")


def memfd_name_prefix(token: bytes) -> str:
    """What the names of an arena's memfds start with (ShmArena.memfdNamePrefix)."""
    return "sluice-" + token.hex() + "-"


def _open_memfd(path: str, owner_pid: int, name_prefix: str) -> int:
    """Opens the memfd a server names as ``/proc/<pid>/fd/<n>`` (ShmFiles.openMemfd): the pid must be
    the arena owner's, what it reaches a regular file of this user named ``memfd:<name_prefix>...``,
    sealed with F_SEAL_SHRINK. Raises OSError naming what is wrong."""
    m = _PROC_FD.fullmatch(path)
    if m is None or int(m.group(1)) != owner_pid:
        raise OSError(f"{path} is not a descriptor of the arena's owner, process {owner_pid}")
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        if st.st_uid != os.getuid():
            raise OSError(f"{path} belongs to user {st.st_uid}, not to this process's user {os.getuid()}")
        name = os.readlink(f"/proc/self/fd/{fd}")
        if not name.startswith("/memfd:" + name_prefix):
            raise OSError(f"{path} reaches {name}, not a memfd of the server's arena")
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        if not seals & fcntl.F_SEAL_SHRINK:
            raise OSError(f"{path} is a memfd that may be shortened (seals {seals:#x})")
    except BaseException:
        os.close(fd)
        raise
    return fd


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
    # O_NONBLOCK: a FIFO put in the file's place after the check above must not block the open
    # (it changes nothing for a regular file, which the check below then insists on).
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(now.st_mode):
        os.close(fd)
        raise OSError(f"{path} was replaced while it was opened")
    return fd


@dataclass
class _Mapping:
    """One key's region: its file, kept open to check its size, and the read-only mmap (``view``
    None when the region is READ over the connection; then ``fd`` is -1)."""

    key: int
    slot: int
    length: int
    view: Optional[memoryview]  # the region's bytes within the mapping
    path: str = ""
    fd: int = -1
    end: int = 0  # where the region ends in its file
    sealed: bool = False  # a memfd that no process can shorten


class ShmPeer:
    """The server's arena as this process sees it; made by :func:`attach`. Holds descriptors
    (the slots table's, each mapped region's) until :meth:`close`."""

    def __init__(self, connection: Connection, arena: str, slots_fd: int, memfd_prefix: str = "") -> None:
        self._connection = connection
        self.arena = arena
        m = _ARENA.fullmatch(os.path.basename(arena))
        self._owner_pid = int(m.group(1)) if m else -1
        self._memfd_prefix = memfd_prefix
        self._slots_fd = slots_fd
        self._mappings: Dict[int, _Mapping] = {}
        self._memfd_refusal_logged = False

    def reaches(self, key: int, timeout: Optional[float] = None) -> bool:
        """Whether region ``key`` is mapped (asking the server where it lives the first time);
        False when it is to be READ over the connection."""
        return self._mapping(key, timeout).view is not None

    def sealed(self, key: int, timeout: Optional[float] = None) -> bool:
        """Whether region ``key`` is mapped and is a sealed memfd: views of it cannot be cut short
        by anyone. False for a file in the arena and for a region READ over the connection."""
        return self._mapping(key, timeout).sealed

    def view(self, key: int, offset: int, length: int, timeout: Optional[float] = None) -> memoryview:
        """A read-only view of ``length`` bytes of region ``key`` from ``offset``; it keeps the
        mapping alive. Raises RegionRevokedException once the server revoked the region,
        RegionTruncatedException when its file no longer covers it, ProtocolException when the
        slots table was cut short."""
        m = self._checked(key, offset, length, timeout)
        return m.view[offset : offset + length]

    def positional(self, key: int, offset: int, length: int, timeout: Optional[float] = None) -> "FileRange":
        """``length`` bytes of region ``key`` from ``offset``, to be copied with positional reads of
        its file (:meth:`FileRange.read_into`) outside whatever lock guards this peer. Checked as a
        view is; the range holds descriptors of its own, so closing this peer does not pull its file
        from under the copy."""
        m = self._checked(key, offset, length, timeout)
        fd = os.dup(m.fd)
        try:
            slots = os.dup(self._slots_fd)
        except BaseException:
            os.close(fd)
            raise
        return FileRange(m, offset, length, fd, slots, os.path.join(self.arena, SLOTS_FILE))

    def _checked(self, key: int, offset: int, length: int, timeout: Optional[float]) -> "_Mapping":
        """Region ``key``'s mapping, once ``[offset, +length)`` lies in it, its slot holds its key and
        its file covers it."""
        m = self._mapping(key, timeout)
        if m.view is None:
            raise TransportUnavailableException(f"region {key:x} is not mapped here; READ it")
        if offset < 0 or length < 0 or offset + length > m.length:
            raise ReadOutOfBoundsException(f"view [{offset}, +{length}) outside region of {m.length} bytes")
        if not self.is_live(m.key, m.slot):
            self._forget(key)
            raise RegionRevokedException("region was revoked by its owner")
        size = os.fstat(m.fd).st_size
        if size < m.end:  # while the region is live: the peer broke it
            self._forget(key)
            raise RegionTruncatedException(_cut(m, offset, length, size))
        return m

    def is_live(self, key: int, slot: int) -> bool:
        """Whether revocation slot ``slot`` still holds ``key``, read from the file (never a mapping)."""
        if self._slots_fd < 0:
            raise PeerClosedException(f"the shm peer of arena {self.arena} is closed")
        return _slot_holds(self._slots_fd, os.path.join(self.arena, SLOTS_FILE), slot, key)

    def _mapping(self, key: int, timeout: Optional[float]) -> _Mapping:
        if self._slots_fd < 0:
            raise PeerClosedException(f"the shm peer of arena {self.arena} is closed")
        m = self._mappings.get(key)
        if m is None:
            m = self._open(key, timeout)
            self._mappings[key] = m
        return m

    def _forget(self, key: int) -> None:
        m = self._mappings.pop(key, None)
        if m is not None and m.fd >= 0:
            os.close(m.fd)

    def _open(self, key: int, timeout: Optional[float]) -> _Mapping:
        try:
            where = frames.decode_shm_location(self._connection.control(frames.SHM_SERVICE, frames.shm_open(key), timeout))
        except TransportUnavailableException:
            return _Mapping(key, 0, 0, None)
        if where.slot >= SLOTS or where.length > 0x7FFFFFFF:
            raise ProtocolException("shm REGION out of range")
        sealed = _PROC_FD.fullmatch(where.path) is not None
        if not sealed and os.path.dirname(where.path) != self.arena:
            _log.debug("region %x lies in %s, outside the arena: READ over the connection", key, where.path)
            return _Mapping(key, where.slot, where.length, None)
        if sealed:
            try:
                fd = _open_memfd(where.path, self._owner_pid, self._memfd_prefix)
            except OSError as e:
                return self._unmapped_memfd(key, where, e)
        else:
            try:
                fd = _open_in_arena(self.arena, where.path)
            except FileNotFoundError:
                raise RegionRevokedException(f"the peer's backing file is gone: {where.path}") from None
            except OSError as e:
                raise ProtocolException(f"refused the peer's shm region: {e}") from None
        end = where.file_offset + where.length
        try:
            if os.fstat(fd).st_size < end:
                raise RegionRevokedException(f"the peer's backing file {where.path} is shorter than the registered region")
            if where.length == 0:
                view = memoryview(b"")
            else:
                start = where.file_offset - where.file_offset % mmap.ALLOCATIONGRANULARITY
                mapped = mmap.mmap(fd, where.file_offset - start + where.length, access=mmap.ACCESS_READ, offset=start)
                skip = where.file_offset - start
                view = memoryview(mapped)[skip : skip + where.length].toreadonly()
        except BaseException:
            os.close(fd)
            raise
        return _Mapping(key, where.slot, where.length, view, where.path, fd, end, sealed)

    def _unmapped_memfd(self, key: int, where: frames.ShmLocation, why: OSError) -> _Mapping:
        """Region ``key`` whose memfd this process cannot or will not open (not there, as for a reader
        in another pid namespace; not its to open; not a sealed memfd of the arena), to be READ over
        the connection, where the server serves its own bytes and answers for a region it revoked.
        The first refusal of this peer is logged as a warning."""
        if not self._connection.is_open:
            raise PeerClosedException(f"the connection closed while region {key & (2**64 - 1):x} was being mapped")
        reason = f"{where.path}: {why.strerror}" if why.strerror else str(why)
        if not self._memfd_refusal_logged:
            self._memfd_refusal_logged = True
            _log.warning("not mapping a memfd of the server, READing it over the connection: %s"
                         " (logged once per connection)", reason)
        else:
            _log.debug("not mapping a memfd of the server: %s", reason)
        return _Mapping(key, where.slot, where.length, None)

    def close(self) -> None:
        """Forgets every mapping and closes the descriptors; each mapping is unmapped once no view
        of it is left."""
        for key in list(self._mappings):
            self._forget(key)
        if self._slots_fd >= 0:
            os.close(self._slots_fd)
            self._slots_fd = -1


def _slot_holds(slots_fd: int, slots_path: str, slot: int, key: int) -> bool:
    if not 0 <= slot < SLOTS:
        raise ValueError(f"slot {slot} outside 0..{SLOTS - 1}")
    raw = os.pread(slots_fd, _SLOT.size, slot * _SLOT.size)
    if len(raw) != _SLOT.size:
        raise ProtocolException(f"the peer's slot table {slots_path} was cut short (slot {slot} is past its end)")
    return _SLOT.unpack(raw)[0] == key


def _cut(m: "_Mapping", offset: int, length: int, size: int) -> str:
    return (f"bytes [{offset}, {offset + length}) of region {m.key & (2**64 - 1):x} cannot be read: the peer's backing"
            f" file {m.path} was cut to {size} bytes, short of the region's end at {m.end}")


class FileRange:
    """A checked range of a mapped region (:meth:`ShmPeer.positional`), copied with positional reads
    of the region's file, never through the mapping. Holds its own descriptors of the file and of
    the slots table until :meth:`read_into` has run. Used by one thread."""

    def __init__(self, mapping: _Mapping, offset: int, length: int, fd: int, slots_fd: int, slots_path: str) -> None:
        self._m = mapping
        self._offset = offset
        self.length = length
        self._fd = fd
        self._slots_fd = slots_fd
        self._slots_path = slots_path

    def read_into(self, into: memoryview) -> None:
        """Fills ``into`` (``length`` writable bytes) from the file, then checks that the region's
        slot still holds its key (the server did not revoke it during the copy), and closes the
        descriptors. Raises RegionTruncatedException when the file ends before the range (``into``
        then holds what it still had), RegionRevokedException when the region was revoked."""
        m = self._m
        try:
            if self._fd < 0:
                raise ValueError("the range was read already")
            into = memoryview(into).cast("B")
            if len(into) != self.length:
                raise ValueError(f"{len(into)} bytes to fill, the range has {self.length}")
            at = m.end - m.length + self._offset  # in the file
            got = 0
            while got < self.length:
                n = os.preadv(self._fd, [into[got:]], at + got)
                if n == 0:
                    raise RegionTruncatedException(_cut(m, self._offset, self.length, os.fstat(self._fd).st_size))
                got += n
            if not _slot_holds(self._slots_fd, self._slots_path, m.slot, m.key):
                raise RegionRevokedException("region was revoked by its owner")
        finally:
            self.close()

    def close(self) -> None:
        """Closes the descriptors (once); :meth:`read_into` does."""
        if self._fd >= 0:
            os.close(self._fd)
            os.close(self._slots_fd)
            self._fd = self._slots_fd = -1


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
        slots = _open_in_arena(info.directory, os.path.join(info.directory, SLOTS_FILE))
        if os.fstat(slots).st_size != SLOTS * _SLOT.size:
            os.close(slots)
            return None, f"the server's slot table in {info.directory} has the wrong size"
    except (OSError, ValueError) as e:
        return None, f"the server's shm arena is not this process's to trust: {e}"
    return ShmPeer(connection, info.directory, slots, memfd_name_prefix(info.token)), ""
