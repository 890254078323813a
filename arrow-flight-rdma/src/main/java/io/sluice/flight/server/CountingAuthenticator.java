package io.sluice.flight.server;

import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;

/** Counts the calls {@code inner} refuses as UNAUTHENTICATED into the server's metrics. Thread safe. */
final class CountingAuthenticator implements CallHeaderAuthenticator {
  private final CallHeaderAuthenticator inner;
  private final FlightMetrics metrics;

  CountingAuthenticator(CallHeaderAuthenticator inner, FlightMetrics metrics) {
    this.inner = inner;
    this.metrics = metrics;
  }

  @Override
  public AuthResult authenticate(CallHeaders headers) {
    try {
      return inner.authenticate(headers);
    } catch (FlightRuntimeException e) {
      if (e.status().code() == FlightStatusCode.UNAUTHENTICATED) {
        metrics.unauthenticatedCall();
      }
      throw e;
    }
  }
}
