"""Whether a client's streams from one server take the READ data plane, and why not.

Mirrors ``io.sluice.flight.client.Negotiator``: decided once per client and server, the reason in
one line. The data plane needs the transport secret, a server that answers the
``sluice.data-plane`` action with an offer signed under the secret for this client's nonce and
audience, and a transport connection to the address it names that authenticates (mutually, with
the secret) with the identity key it names. Any "no" is plain Flight, except for a client that
asked for encryption: it never falls back to a plaintext gRPC location; and a "no" nothing signed
(an unsigned offer or refusal, a transport that proved another key) fails the stream unless the
client allows the unsigned fallback.
"""

from __future__ import annotations

import hmac
import logging
import os
from dataclasses import dataclass
from typing import Optional

import pyarrow as pa

from ..errors import TransportException
from ..transport import _connection as transport
from ..transport import _shm as shm
from ..transport._handshake import NodeIdentity
from . import _data_plane as data_plane, call_token
from ._landing import Allocate
from ._session import DataPlaneSession

__all__ = ["DATA_PLANE_ACTION", "Decision", "DataPlaneSession", "DataPlaneOptions", "negotiate"]

_log = logging.getLogger("sluice.flight")

#: The Flight action a Sluice server answers with where its transport listens (``DataPlaneOffer.ACTION``).
DATA_PLANE_ACTION = data_plane.ACTION


@dataclass(frozen=True)
class DataPlaneOptions:
    """The client's data-plane settings, named as the Java keys they mirror.

    * ``encrypt`` (``sluice.transport.encryption``): ask for an encrypted transport connection.
    * ``unsigned_fallback`` (``sluice.flight.unsignedFallback``): take plain Flight on a "no" the
      server did not sign (a server without the secret); otherwise such a "no" fails the stream.
    * ``shm`` (the shm provider): view a same-host server's memory instead of READing over tcp.
    * ``zero_copy`` (``sluice.flight.zeroCopy``): on shm, take bodies as views (False: copy them into
      landing memory with positional reads of the server's files, which a file cut short fails
      with an exception where a view faults).
    * ``verify_reads`` (``sluice.flight.verifyReads``): check each body's CRC32C before Arrow sees it.
    * ``stream_window`` (``sluice.flight.streamWindow``): bodies one get keeps READs in flight for.
    * ``read_chunk_bytes`` (``sluice.flight.readChunkBytes``): largest range of a body's batched READ.
    * ``landing_bytes``: most bytes of bodies one stream READs ahead of its consumer (at least one
      body at a time); a body announced larger fails the stream, so a server cannot make the
      reader allocate what it announces.
    * ``connect_timeout``/``io_timeout`` (seconds; ``connectTimeoutMs``/``ioTimeoutMs``).
    """

    encrypt: bool = False
    unsigned_fallback: bool = False
    shm: bool = True
    zero_copy: bool = True
    verify_reads: bool = True
    stream_window: int = 4
    read_chunk_bytes: int = 8 << 20
    landing_bytes: int = 256 << 20
    connect_timeout: float = 10.0
    io_timeout: float = 30.0


@dataclass(frozen=True)
class Decision:
    """The outcome: ``data_path`` is ``"grpc"`` (plain Flight) or the path READs take (``"tcp"``,
    ``"shm"``); ``reason`` says why, in one line; ``session`` is the data-plane session."""

    data_path: str
    reason: str
    session: Optional["DataPlaneSession"] = None
    #: the "no" is the server's own, signed under the secret, or this client's settings: never an
    #: answer anybody on the path could have given.
    authenticated: bool = True


def negotiate(client, options, secret: Optional[str], data_plane_wanted: bool = True,
              settings: DataPlaneOptions = DataPlaneOptions(), identity: Optional[NodeIdentity] = None,
              audience: str = "", allocate: Optional[Allocate] = None) -> Decision:
    """Decides for ``client`` (a ``pyarrow.flight.FlightClient``) calling with ``options``.

    Asks the server for its data-plane offer only when the client could use one: the data plane is
    wanted and the transport secret (which authenticates it, unlike the call token) is known. An
    offer or a refusal counts as the server's only when signed over the nonce, ``audience`` (what
    this client's call token names: ``call_token.audience`` of its location, or the audience of the
    token it was given) and the answer.
    """
    from pyarrow import flight

    from ..transport._handshake import check_secret

    if not data_plane_wanted:
        return Decision("grpc", "the data plane is turned off (data_plane=False)")
    if not secret:
        return Decision("grpc", "no transport secret given (the data plane authenticates with it, not the call token)")
    try:
        check_secret(secret)
    except ValueError as e:
        return Decision("grpc", f"the transport secret is unusable: {e}")
    nonce = os.urandom(16)
    try:
        results = list(client.do_action(flight.Action(DATA_PLANE_ACTION, nonce), options=options))
    except (flight.FlightError, pa.ArrowException) as e:
        return Decision("grpc", f"the server offers no data plane ({type(e).__name__}: {e})", authenticated=False)
    if not results:
        return Decision("grpc", "the server answered the data-plane action with nothing", authenticated=False)
    answer = results[0].body.to_pybytes()
    signature = results[1].body.to_pybytes() if len(results) > 1 else None
    signed = signature is not None and hmac.compare_digest(
        signature, call_token.sign(secret, data_plane.SIGNATURE_LABEL, nonce, audience.encode("utf-8"), answer))
    refused = data_plane.refusal_reason(answer)
    if refused is not None:
        if signed:
            return Decision("grpc", f"the server (signed) offers no data plane: {refused}")
        return Decision("grpc", f"an unsigned refusal of the data plane: {refused}", authenticated=False)
    if not signed:
        # An offer on the path could name another node of the cluster, which holds the secret and
        # passes the handshake: only the server's signature says the node is the server's.
        why = "no signature" if signature is None else f"its signature does not verify under the secret for {audience}"
        return Decision("grpc", f"an unsigned data-plane offer ({why}): anybody on the path could have sent it",
                        authenticated=False)
    try:
        offer = data_plane.decode_offer(answer)
    except ValueError as e:
        return Decision("grpc", f"the server's data-plane offer is unreadable: {e}", authenticated=False)
    identity = identity or NodeIdentity()  # one node for every connection: the server's bounds are per node
    try:
        conn = transport.connect(
            offer.host, offer.port, secret, encrypt=settings.encrypt, identity=identity,
            connect_timeout=settings.connect_timeout, io_timeout=settings.io_timeout,
            expected_identity_key=offer.identity_key,
        )
    except Exception as e:  # noqa: BLE001 (whatever failed, nothing authenticated this "no")
        return Decision("grpc", f"the transport at {offer.host}:{offer.port} refused us: {type(e).__name__}: {e}",
                        authenticated=False)
    peer, why_not = None, "shm is turned off (shm=False)"
    if offer.provider == "verbs":
        why_not = "the server's transport is verbs, which this package does not speak: READs go over tcp"
        _log.warning("%s:%d: %s", offer.host, offer.port, why_not)
    elif settings.shm:
        try:
            peer, why_not = shm.attach(conn, settings.connect_timeout)
        except TransportException as e:
            conn.close()
            return Decision("grpc", f"the transport at {offer.host}:{offer.port} failed the shm set-up: {e}",
                            authenticated=False)
    def connect() -> transport.Connection:
        # The stream connections: the same secret, identity and server key as the one just proven.
        return transport.connect(offer.host, offer.port, secret, encrypt=settings.encrypt, identity=identity,
                                 connect_timeout=settings.connect_timeout, io_timeout=settings.io_timeout,
                                 expected_identity_key=offer.identity_key)

    session = DataPlaneSession(conn, offer, peer, settings, connect, allocate)
    reason = f"the server offers a {offer.provider} data plane at {offer.host}:{offer.port}"
    if peer is None:
        reason += f"; READs over tcp ({why_not})"
    return Decision(session.data_path, reason + (", encrypted" if conn.encrypted else ""), session)
