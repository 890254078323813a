"""Whether a client's streams from one server take the READ data plane, and why not.

Mirrors ``io.sluice.flight.client.Negotiator``: decided once per client and server, the reason in
one line. This package has no READ client yet, so every decision is plain Flight; what changes when
the client lands is the last rule, which then opens the transport session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["DATA_PLANE_ACTION", "Decision", "negotiate"]

#: The Flight action a Sluice server answers with where its transport listens (``DataPlaneOffer.ACTION``).
DATA_PLANE_ACTION = "sluice.data-plane"


@dataclass(frozen=True)
class Decision:
    """The outcome: ``data_path`` is ``"grpc"`` (plain Flight) or a transport provider; ``reason``
    says why, in one line."""

    data_path: str
    reason: str


def negotiate(client, options, secret: Optional[str], data_plane: bool = True) -> Decision:
    """Decides for ``client`` (a ``pyarrow.flight.FlightClient``) calling with ``options``.

    Asks the server for its data-plane offer only when the client could use one: the data plane is
    wanted and the transport secret (which authenticates it, unlike the call token) is known.
    """
    from pyarrow import flight

    if not data_plane:
        return Decision("grpc", "the data plane is turned off (data_plane=False)")
    if not secret:
        return Decision("grpc", "no transport secret given (the data plane authenticates with it, not the call token)")
    try:
        offers = list(client.do_action(flight.Action(DATA_PLANE_ACTION, b""), options=options))
    except flight.FlightError as e:
        return Decision("grpc", f"the server offers no data plane ({type(e).__name__}: {e})")
    if not offers:
        return Decision("grpc", "the server answered the data-plane action with nothing")
    return Decision("grpc", "the server offers a data plane, but this sluice package has no READ client yet")
