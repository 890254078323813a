package io.sluice.flight.client;

import io.sluice.flight.CallToken;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

/**
 * The call token one client presents to one server: minted for that server's location with a
 * short validity, and minted again once half of it has passed, so a token captured on the way is
 * good for that server alone and not for long. Thread safe.
 */
public final class RenewingToken implements Supplier<String> {
  private final CallToken.Key key;
  private final String audience;
  private final Duration validity;
  private final Clock clock;
  private String token;
  private Instant renewAt = Instant.MIN;

  public RenewingToken(CallToken.Key key, String audience, Duration validity, Clock clock) {
    this.key = key;
    this.audience = CallToken.audience(audience);
    this.validity = validity;
    this.clock = clock;
  }

  @Override
  public synchronized String get() {
    Instant now = clock.instant();
    if (!now.isBefore(renewAt)) {
      // Expiry is kept to the second: round up so a token lives at least the validity.
      token = key.mint(audience, now.plus(validity).plusSeconds(1));
      renewAt = now.plus(validity.dividedBy(2));
    }
    return token;
  }

  public String audience() {
    return audience;
  }
}
