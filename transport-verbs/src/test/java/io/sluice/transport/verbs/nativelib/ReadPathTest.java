package io.sluice.transport.verbs.nativelib;

import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The READ path's work requests as posting hands them to the device, without a device:
 * {@code io.sluice.transport.verbs.rc.ReadPathScenarios} runs in the DiSNI runtime's loader,
 * where the chain's native memory lives.
 */
class ReadPathTest {

  private static DisniRuntime runtime;

  @BeforeAll
  static void load() {
    runtime = Packaging.loadedRuntime();
  }

  @ParameterizedTest
  @ValueSource(strings = {"mixedSizesPostAsOneChain", "reusedSlotCarriesNothingStale",
      "readsBeyondTheRingWaitAndWrapAround", "chainRejectsBadRanges"})
  @SuppressWarnings("unchecked")
  void scenario(String name) {
    runtime.newInstance("io.sluice.transport.verbs.rc.ReadPathScenarios", Consumer.class).accept(name);
  }
}
