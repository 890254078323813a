/**
 * The transport's own counters and latency histograms ({@link io.sluice.transport.metrics.TransportMetrics}),
 * kept where things happen and read as snapshots of {@link io.sluice.transport.metrics.Metric}s by
 * the integrations, which expose them in Spark's, Hadoop's and Flight's metrics systems. No
 * dependency beyond the JDK.
 */
package io.sluice.transport.metrics;
