"""PySpark's entry point to published tables: a DataFrame served from the executors' memory over
Flight, by name (``io.sluice.spark.tables.SluiceTables`` through py4j).

::

    t = sluice.spark.publish(df, "features")
    loader = DataLoader(t.dataset(columns=["x", "y"]), batch_size=None)

Needs a classic (not Spark Connect) SparkSession whose driver and executors have the
``sluice-spark-tables`` jar of their Spark line on their class path. pyspark is imported by the
functions here, not by ``import sluice`` or ``import sluice.spark``. Call from the driver; the
functions are thread safe as the JVM API is.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import hmac
import math
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from .errors import LostShardsError, TableError, TableMemoryError, UnsupportedColumnError

__all__ = ["PublishedTable", "TableShard", "ExecutorMemory", "publish", "unpublish", "tables", "table", "memory",
           "secret", "tables_secret", "catalog_token"]

_API = "io.sluice.spark.tables.SluiceTables"
_TABLE_EXCEPTION = "io.sluice.spark.tables.TableException"
# The Java exception classes' Python counterparts; the most specific first.
_ERRORS = (
    (_TABLE_EXCEPTION + "$TableMemoryException", TableMemoryError),
    (_TABLE_EXCEPTION + "$LostShardsException", LostShardsError),
    (_TABLE_EXCEPTION + "$UnsupportedColumnException", UnsupportedColumnError),
    (_TABLE_EXCEPTION, TableError),
    ("java.lang.IllegalArgumentException", ValueError),
)


@dataclass(frozen=True)
class TableShard:
    """One shard of a published table (``io.sluice.spark.tables.TableShard``): one record batch of
    Spark partition ``partition``, held by executor ``executor_id`` whose Flight server is at
    ``location``, as flight ``flight``."""

    flight: str
    partition: int
    batch: int
    executor_id: str
    location: str
    rows: int
    bytes: int


@dataclass(frozen=True)
class ExecutorMemory:
    """What one executor's server holds of published tables (``ExecutorMemory``): ``bytes`` counted
    against its ``budget`` (``spark.sluice.tables.memory``), and the memory regions its data plane
    has registered now."""

    executor_id: str
    location: str
    tables: int
    shards: int
    bytes: int
    budget: int
    registered_regions: int


@dataclass(frozen=True)
class PublishedTable:
    """A published table as the driver's catalog held it when asked (``PublishedTable``): a snapshot;
    ask :func:`table` again for news, lost shards for one.

    Any Flight client finds it at ``uri`` (the catalog) under ``name``. ``lost`` maps the flights
    lost with their executors to why; ``data_plane`` is what the executors offer beside gRPC
    (``"shm"``, ``"tcp"``, ``"verbs"``, or ``"grpc"`` for none); ``expires`` is when its
    time-to-live unpublishes it (UTC), None without one.

    ``secret`` is the tables' secret, which :meth:`dataset` and :meth:`reader` read with in this
    process. It never appears in ``repr``/``str`` and is not pickled: a handle sent elsewhere
    arrives without it (hand a trainer the secret as a secret, an environment variable, and the
    URI and name in the open). Immutable; thread safe.
    """

    name: str
    uri: str
    rows: int
    bytes: int
    shards: Tuple[TableShard, ...]
    endpoints: Tuple[str, ...]
    data_plane: str
    lost: Dict[str, str] = field(hash=False)
    expires: Optional[datetime.datetime]
    def __repr__(self) -> str:
        return (f"PublishedTable(name={self.name!r}, uri={self.uri!r}, rows={self.rows}, bytes={self.bytes},"
                f" shards={len(self.shards)}, endpoints={list(self.endpoints)!r}, data_plane={self.data_plane!r},"
                f" lost={self.lost!r}, expires={self.expires!r}, secret=<hidden>)")

    __str__ = __repr__

    @property
    def secret(self) -> Optional[str]:
        """The tables' secret this handle reads with, or None (not a dataclass field: ``asdict``,
        ``repr`` and pickling leave it out)."""
        return self.__dict__.get("_secret")

    def _with_secret(self, secret_value: Optional[str]) -> "PublishedTable":
        object.__setattr__(self, "_secret", secret_value)
        return self

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_secret", None)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)

    def _credentials(self) -> Dict[str, Any]:
        if not self.secret:
            raise ValueError(f"this handle of table '{self.name}' holds no secret (it was pickled, or made"
                             " elsewhere): use SluiceDataset.from_table(uri, name, secret=...)")
        return {"secret": self.secret}

    def dataset(self, **kwargs: Any):
        """The table as a :class:`sluice.torch.SluiceDataset` (keyword arguments are the
        dataset's: ``columns``, ``seed``, ``rank``, ``world``, ``max_rows``, ...), read over the
        executors' data plane. Imports torch."""
        from .torch import SluiceDataset

        self._credentials()
        return SluiceDataset.from_table(self, **kwargs)

    def reader(self, *, timeout: Optional[float] = 30.0, **kwargs: Any) -> "TableStream":
        """Every shard's record batches in the catalog's order, over the data plane; close it (or use
        it as a context manager). ``kwargs`` go to each :class:`sluice.flight.SluiceFlightClient`."""
        from .flight._catalog import table_shards

        shards = table_shards(self.uri, self.name, timeout=timeout, **self._credentials())
        return TableStream(shards, self.secret, timeout, kwargs)

    def to_table(self, *, timeout: Optional[float] = 30.0, **kwargs: Any):
        """The whole table as one ``pyarrow.Table`` (read into this process's memory)."""
        with self.reader(timeout=timeout, **kwargs) as r:
            return r.read_all()


class TableStream:
    """A published table's record batches, shard after shard in the catalog's order, each shard
    read with the data plane where its executor offers it (:attr:`data_paths` says how each
    travelled). Owns one client per executor; close it. Not thread safe."""

    def __init__(self, shards, secret: Optional[str], timeout: Optional[float], options: Dict[str, Any]) -> None:
        self._shards = shards
        self._secret = secret
        self._timeout = timeout
        self._options = options
        self._clients: Dict[str, Any] = {}
        self.data_paths: List[str] = []
        self.schema = None

    def __iter__(self) -> Iterator[Any]:
        from .flight._client import SluiceFlightClient

        for shard in self._shards:
            client = self._clients.get(shard.location)
            if client is None:
                client = self._clients[shard.location] = SluiceFlightClient(
                    shard.location, secret=self._secret, timeout=self._timeout, **self._options)
            with client.get_stream(shard.ticket) as reader:
                self.schema = reader.schema
                self.data_paths.append(reader.data_path)
                yield from reader

    def read_all(self):
        """The remaining batches as one ``pyarrow.Table``."""
        import pyarrow as pa

        batches = list(self)
        return pa.Table.from_batches(batches, self.schema) if batches or self.schema is not None \
            else pa.Table.from_batches([])

    def close(self) -> None:
        clients, self._clients = self._clients, {}
        for c in clients.values():
            c.close()

    def __enter__(self) -> "TableStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---- the JVM API


def publish(df, name: str, *, batch_rows: Optional[int] = None, ttl: Union[None, int, float, str] = None,
            republish_lost: bool = False, mode: str = "error") -> PublishedTable:
    """Publishes DataFrame ``df`` as ``name``: each partition becomes Arrow record batches of at most
    ``batch_rows`` rows (8192 by default) in its executor's memory, served over Flight; returns once
    every partition is served.

    ``ttl``: the table is unpublished this long after publishing (seconds, or Spark's time strings:
    ``"30s"``, ``"10m"``); ``republish_lost``: shards lost with an executor are published again
    from the DataFrame's lineage; ``mode``: ``"error"`` (a table of that name fails the call) or
    ``"overwrite"``.

    :raises TableMemoryError: the table does not fit in an executor's budget (``spark.sluice.tables.memory``)
    :raises UnsupportedColumnError: a column Arrow cannot hold (named)
    :raises TableError: the name is taken, or publishing failed (nothing stays published)
    :raises ValueError: an invalid name or option
    """
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        raise TypeError(f"publish needs a classic PySpark DataFrame (with a JVM side), got {type(df).__name__};"
                        " Spark Connect DataFrames cannot be published from Python")
    spark = df.sparkSession
    jvm = _jvm(spark)
    options = jvm.java.util.HashMap()
    for key, value in _options(batch_rows, ttl, republish_lost, mode).items():
        options.put(key, value)
    api = _api(spark)
    with _java_errors():
        published = api.publish(jdf, name, options)
        return _table(published, secret(spark))


def unpublish(spark, name: str) -> bool:
    """Unpublishes ``name``, freeing its memory on every executor; False if no such table is published."""
    with _java_errors():
        return bool(_api(spark).unpublish(spark._jsparkSession, name))


def tables(spark) -> List[PublishedTable]:
    """The published tables, by name."""
    with _java_errors():
        found = list(_api(spark).list(spark._jsparkSession))
        # Asked only when there are tables: asking starts the catalog.
        key = secret(spark) if found else None
        return [_table(t, key) for t in found]


def table(spark, name: str) -> Optional[PublishedTable]:
    """The table published as ``name`` as the catalog holds it now (its lost shards included), or None."""
    with _java_errors():
        found = _api(spark).table(spark._jsparkSession, name)
        return _table(found.get(), secret(spark)) if found.isPresent() else None


def memory(spark) -> List[ExecutorMemory]:
    """What every executor's server holds of published tables now (each one is asked)."""
    with _java_errors():
        return [ExecutorMemory(str(m.executorId()), str(m.location()), int(m.tables()), int(m.shards()),
                               int(m.bytes()), int(m.budget()), int(m.registeredRegions()))
                for m in _api(spark).memory(spark._jsparkSession)]


def secret(spark) -> str:
    """The tables' secret (Spark's own with ``spark.authenticate``): what a reader needs for the data
    plane. Hand it to another process as a secret (an environment variable), never in a file, a URI
    or a log line."""
    with _java_errors():
        return str(_api(spark).secret(spark._jsparkSession))


def tables_secret(spark_secret: str, application_id: str) -> str:
    """The tables' secret of application ``application_id`` where Spark authenticates with
    ``spark_secret`` (what :func:`secret` is there): HMAC-SHA256 keyed with Spark's secret over
    ``sluice/tables secret``, a zero byte and the application id, in lowercase hex
    (``SluiceTables.tablesSecret``). A trainer that holds Spark's secret and learns the application
    id (not a secret) derives it. Needs no Spark."""
    message = b"sluice/tables secret\x00" + application_id.encode("utf-8")
    return hmac.new(spark_secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def catalog_token(spark, validity: float = 600.0) -> str:
    """A call token for the catalog valid ``validity`` seconds: what a plain Flight client
    (pyarrow) presents as ``Authorization: Bearer <token>``; the catalog's answer carries a token
    per executor."""
    jvm = _jvm(spark)
    with _java_errors():
        return str(_api(spark).catalogToken(spark._jsparkSession,
                                            jvm.java.time.Duration.ofMillis(int(validity * 1000))))


def _options(batch_rows, ttl, republish_lost, mode) -> Dict[str, str]:
    options = {"mode": str(mode), "republishLost": "true" if republish_lost else "false"}
    if batch_rows is not None:
        if isinstance(batch_rows, bool) or not isinstance(batch_rows, int):
            raise ValueError(f"batch_rows must be a whole number of rows, got {batch_rows!r}")
        options["batchRows"] = str(batch_rows)
    if ttl is not None:
        if isinstance(ttl, bool):
            raise ValueError(f"ttl must be seconds or a time such as '10m', got {ttl!r}")
        if isinstance(ttl, (int, float)):
            if not (ttl > 0 and math.isfinite(ttl)):
                raise ValueError(f"ttl must be a positive, finite number of seconds, got {ttl!r}")
            options["ttl"] = f"{max(1, round(ttl * 1000))}ms"
        else:
            options["ttl"] = str(ttl)
    return options


def _jvm(spark):
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        raise TypeError("sluice.spark needs a classic SparkSession (with a JVM side); Spark Connect has none")
    return jvm


def _api(spark):
    from py4j.java_gateway import JavaClass

    api = _jvm(spark).io.sluice.spark.tables.SluiceTables
    if not isinstance(api, JavaClass):  # py4j answers a package for a class it cannot load
        raise TableError(f"{_API} is not on the driver's class path: start the session with the"
                         " sluice-spark-tables jar of its Spark line on spark.driver.extraClassPath and"
                         " spark.executor.extraClassPath (or spark.jars)")
    return api


def _table(t, secret_value: Optional[str]) -> PublishedTable:
    shards = tuple(TableShard(str(s.flight()), int(s.partition()), int(s.batch()), str(s.executorId()),
                              str(s.location()), int(s.rows()), int(s.bytes())) for s in t.shards())
    lost = {str(e.getKey()): str(e.getValue()) for e in t.lost().entrySet()}
    expires = None
    if t.expires().isPresent():
        millis = int(t.expires().get().toEpochMilli())
        expires = datetime.datetime.fromtimestamp(millis / 1000, tz=datetime.timezone.utc)
    return PublishedTable(str(t.name()), str(t.uri()), int(t.rows()), int(t.bytes()), shards,
                          tuple(str(e) for e in t.endpoints()), str(t.dataPlane()), lost, expires
                          )._with_secret(secret_value)


@contextlib.contextmanager
def _java_errors() -> Iterator[None]:
    """The JVM API's exceptions as this package's (their Java message kept). py4j raises
    ``Py4JJavaError``; PySpark's handler turns some (IllegalArgumentException) into its own
    captured exceptions, which keep the Java one as ``_origin``."""
    try:
        yield
    except Exception as e:  # noqa: BLE001 - only JVM exceptions are translated; others go as they are
        java = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
        if java is None:
            raise
        mapped = _python_error(java)
        if mapped is None:
            raise
        raise mapped from e


def _python_error(java) -> Optional[Exception]:
    classes = set()
    c = java.getClass()
    while c is not None:
        classes.add(str(c.getName()))
        c = c.getSuperclass()
    for name, python in _ERRORS:
        if name in classes:
            return python(str(java.getMessage()))
    return None
