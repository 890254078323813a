package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/** The harness itself: a local-cluster job under Spark's default shuffle gives the right answer. */
class LocalClusterSmokeTest {
  @Test
  void reduceByKeyOnSeparateExecutorJvms() {
    try (JavaSparkContext sc = LocalCluster.start(LocalCluster.conf("smoke", false))) {
      List<Integer> data = new ArrayList<>();
      for (int i = 0; i < 1000; i++) {
        data.add(i);
      }
      Map<Integer, Integer> got = new TreeMap<>(sc.parallelize(data, 4)
          .mapToPair(i -> new Tuple2<>(i % 7, 1)).reduceByKey(Integer::sum, 3).collectAsMap());
      Map<Integer, Integer> expected = new TreeMap<>();
      data.forEach(i -> expected.merge(i % 7, 1, Integer::sum));
      assertEquals(expected, got);
      assertEquals(2, sc.sc().getExecutorIds().size());
    }
  }
}
