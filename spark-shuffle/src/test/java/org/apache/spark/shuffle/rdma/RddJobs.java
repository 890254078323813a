package org.apache.spark.shuffle.rdma;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * The RDD jobs the shuffle tests run under both shuffle managers. Each returns a value with a
 * meaningful equals: sorted where Spark defines no order, as is where it does. Stateless.
 */
final class RddJobs {
  private RddJobs() {}

  /** reduceByKey, groupByKey, sortByKey and join, in that order. */
  static List<ComparisonSupport.Job> keyedShuffles() {
    return List.of(
        new ComparisonSupport.Job("reduceByKey", RddJobs::reduceByKey),
        new ComparisonSupport.Job("groupByKey", RddJobs::groupByKey),
        new ComparisonSupport.Job("sortByKey", RddJobs::sortByKey),
        new ComparisonSupport.Job("join", RddJobs::join));
  }

  /** A one-row dataset repartitioned: most reduce tasks read nothing. */
  static ComparisonSupport.Job repartitionOfOneRow() {
    return new ComparisonSupport.Job("repartition of 1 row",
        sc -> sc.parallelize(List.of(42), 3).repartition(5).collect());
  }

  static Object reduceByKey(JavaSparkContext sc) {
    List<String> out = new ArrayList<>(sc.parallelize(SharedJobs.range(20_000), 4)
        .mapToPair(i -> new Tuple2<>(i % 97, (long) i)).reduceByKey(Long::sum, 5)
        .map(t -> t._1() + "=" + t._2()).collect());
    Collections.sort(out);
    return out;
  }

  static Object groupByKey(JavaSparkContext sc) {
    List<String> out = new ArrayList<>(sc.parallelize(SharedJobs.range(10_000), 4)
        .mapToPair(i -> new Tuple2<>("k" + (i % 53), i)).groupByKey(3)
        .map(t -> {
          List<Integer> values = new ArrayList<>();
          t._2().forEach(values::add);
          Collections.sort(values);
          return t._1() + "=" + values;
        }).collect());
    Collections.sort(out);
    return out;
  }

  static Object sortByKey(JavaSparkContext sc) {
    // Spark defines the order of sortByKey's result, so the list is compared as is.
    return sc.parallelize(SharedJobs.range(30_000), 4)
        .mapToPair(i -> new Tuple2<>((i * 7919L) % 100_003, "v" + i)).sortByKey(true, 6)
        .map(t -> t._1() + ":" + t._2()).collect();
  }

  static Object join(JavaSparkContext sc) {
    JavaPairRDD<Integer, String> left = sc.parallelize(SharedJobs.range(5_000), 3).mapToPair(i -> new Tuple2<>(i % 700, "l" + i));
    JavaPairRDD<Integer, String> right = sc.parallelize(SharedJobs.range(3_000), 2).mapToPair(i -> new Tuple2<>(i % 500, "r" + i));
    List<String> out = new ArrayList<>(left.join(right, 4).map(t -> t._1() + ":" + t._2()._1() + "," + t._2()._2())
        .collect());
    Collections.sort(out);
    return out;
  }

  static Object bigRecords(JavaSparkContext sc) {
    List<String> out = new ArrayList<>(sc.parallelize(List.of(1, 2, 3), 3)
        .map(seed -> {
          byte[] b = new byte[17 * 1024 * 1024 + seed];
          for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i * 31 + seed);
          }
          return b;
        })
        .repartition(2)
        .map(b -> b.length + "#" + Arrays.hashCode(b)).collect());
    Collections.sort(out);
    return out;
  }

  static Object manyPartitions(JavaSparkContext sc) {
    // More than 2000 reduce partitions: map tasks report HighlyCompressedMapStatus. The narrow
    // coalesce keeps the task count small while every one of the 2100 partitions is still read.
    return sc.parallelize(SharedJobs.range(50_000), 4).mapToPair(i -> new Tuple2<>(i, (long) i))
        .partitionBy(new HashPartitioner(2100))
        .mapPartitionsWithIndex((idx, it) -> {
          long sum = 0;
          int n = 0;
          while (it.hasNext()) {
            sum += it.next()._2();
            n++;
          }
          return List.of(idx + ":" + n + ":" + sum).iterator();
        }, true)
        .coalesce(4).collect();
  }
}
