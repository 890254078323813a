package org.apache.spark.shuffle.rdma;

import java.util.List;
import java.util.Map;
import org.apache.spark.ShuffleSuite;

/**
 * Spark's own shuffle tests ({@code org.apache.spark.ShuffleSuite}, from the spark-core tests jar of
 * the Spark line being built) with this module's shuffle manager, the way Spark's {@code
 * SortShuffleSuite} runs them with the sort manager. Every Spark line's build compiles and runs this
 * one file.
 *
 * <p>By default only the tests in {@code local} mode run, plus one in {@code local-cluster} mode
 * whose reduce tasks READ from another executor: the quick set for the lines other than the default
 * one (their SparkLineTest covers local-cluster). {@code -Dsluice.shuffleSuite.full=true} runs them all, except the tests in {@link
 * #CANNOT_PASS}.
 *
 * <p>Runs on the JUnit Platform through ScalaTest's engine. Local-cluster tests need the system
 * property {@code spark.test.home} (a directory whose {@code jars/} may be empty) and the
 * environment {@code SPARK_SCALA_VERSION}, as the module poms set.
 */
public class RdmaShuffleSuite extends ShuffleSuite {
  /**
   * Tests that cannot pass with this shuffle manager, by name, each with the reason: none today.
   * "SPARK-36206: shuffle checksum detect disk corruption" passes because the reader checks every
   * block, local ones included, and a failed check carries Spark's diagnosis.
   */
  static final Map<String, String> CANNOT_PASS = Map.of();

  /** The local-cluster tests left out of the quick set (each starts two executor JVMs). */
  static final List<String> LOCAL_CLUSTER_SLOW = List.of(
      "shuffle serializer",
      "zero sized blocks",
      "zero sized blocks without kryo",
      "shuffle on mutable pairs",
      "sorting on mutable pairs",
      "cogroup using mutable pairs",
      "subtract mutable pairs",
      "sort with Java non serializable class - Kryo",
      "sort with Java non serializable class - Java");

  private static final String TESTING = "spark.testing";
  private static final String EXECUTOR_OPTIONS = "spark.executor.defaultJavaOptions";

  /** Whether every test runs, not only the quick set. */
  static final String FULL = "sluice.shuffleSuite.full";

  /** SparkFunSuite sets spark.testing for good; the tests that run after this one in the JVM get it back. */
  private String testingBefore;

  @Override
  public void beforeAll() {
    testingBefore = System.getProperty(TESTING);
    super.beforeAll();
    conf().set("spark.shuffle.manager", RdmaShuffleManager.class.getName());
    // The suite's conf does not load system properties: the executor JVM options the build gives
    // every other test's executors (the poms' sluice.test.executorJavaOptions) are passed on here.
    String executorOptions = System.getProperty(EXECUTOR_OPTIONS);
    if (executorOptions != null) {
      conf().set(EXECUTOR_OPTIONS, executorOptions);
    }
  }

  @Override
  public void afterAll() {
    try {
      super.afterAll();
    } finally {
      if (testingBefore == null) {
        System.clearProperty(TESTING);
      } else {
        System.setProperty(TESTING, testingBefore);
      }
    }
  }

  /**
   * The names SparkFunSuite registers as ignored. Called from the superclass's constructor, so it
   * reads only constants and system properties.
   */
  @Override
  public scala.collection.immutable.List<String> excluded() {
    scala.collection.immutable.List<String> names = scala.collection.immutable.List$.MODULE$.empty();
    for (String name : CANNOT_PASS.keySet()) {
      names = names.$colon$colon(name);
    }
    if (!Boolean.getBoolean(FULL)) {
      for (String name : LOCAL_CLUSTER_SLOW) {
        names = names.$colon$colon(name);
      }
    }
    return names;
  }
}
