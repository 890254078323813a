package io.sluice.hadoop.rpc;

import java.io.IOException;

/** The checked exception the test protocol throws; has the (String) constructor unwrapping needs. */
public class EchoCheckedException extends IOException {
  private static final long serialVersionUID = 1L;

  public EchoCheckedException(String message) {
    super(message);
  }
}
