package io.sluice.spark.tables;

import java.io.Serializable;

/**
 * One shard of a published table: one record batch (at most the table's {@code batchRows} rows of
 * one Spark partition), served by the Flight server of the executor that computed it. Shards are
 * what loaders order, shuffle and split between ranks and workers.
 *
 * @param flight the flight's name on that server (its ticket opens it)
 * @param partition the Spark partition the rows came from
 * @param batch the batch's position in its partition
 * @param executorId the executor holding it
 * @param location the executor's Flight location ({@code grpc+tcp://host:port} or {@code grpc+tls://...})
 * @param rows its rows
 * @param bytes the bytes of its batches' bodies
 */
public record TableShard(String flight, int partition, int batch, String executorId, String location, long rows, long bytes)
    implements Serializable {}
