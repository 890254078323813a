"""Sluice for Python: read the tables a Sluice pipeline serves over Arrow Flight, in the shard order
of the Java loader, into PyTorch.

* :mod:`sluice.order`: the Java loader's shard order, bit for bit.
* :mod:`sluice.flight`: readers over Arrow Flight.
* :mod:`sluice.spark`: ``publish(df, name)`` from PySpark: a DataFrame served from the executors'
  memory, read by URI and name (imports pyspark when called; ``import sluice`` does not).
* :mod:`sluice.torch`: ``SluiceDataset``, an ``IterableDataset`` (imports torch; ``import sluice``
  does not).
"""

from .errors import ShardReadException, SluiceException, UnsupportedColumnException
from .order import Cursor

__version__ = "0.1.0"

__all__ = ["Cursor", "SluiceException", "ShardReadException", "UnsupportedColumnException", "__version__"]
