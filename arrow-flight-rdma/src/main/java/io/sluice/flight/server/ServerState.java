package io.sluice.flight.server;

import io.sluice.flight.memory.LandingPool;
import io.sluice.flight.memory.StagingBudget;
import io.sluice.flight.table.TableRegistry;
import io.sluice.transport.Transport;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;

/**
 * What the stream handlers of one server share. {@code transport} is empty when the data plane
 * is off (no secret, or the transport could not start); then every stream is plain Flight.
 * Owned by {@link io.sluice.flight.SluiceFlightServer}, which closes the parts.
 */
record ServerState(
    BufferAllocator allocator,
    TableRegistry tables,
    Optional<Transport> transport,
    Optional<LandingPool> landing,
    Grants grants,
    StagingBudget budget,
    int window,
    long ackTimeoutNanos,
    int readChunkBytes,
    long connectTimeoutNanos,
    ExecutorService ackReaders,
    AtomicInteger activeStreams) {}
