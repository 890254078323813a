package io.sluice.spark.tables;

/**
 * What one executor's server holds of published tables now, as it answers the driver.
 *
 * @param executorId the executor
 * @param location its Flight server
 * @param tables tables it holds shards of
 * @param shards shards it holds
 * @param bytes bytes of their bodies, counted against its budget
 * @param budget its budget for published tables ({@link TablesConf#MEMORY})
 * @param registeredRegions memory regions its data plane has registered now (staged batches)
 */
public record ExecutorMemory(String executorId, String location, int tables, int shards, long bytes, long budget,
    int registeredRegions) {}
