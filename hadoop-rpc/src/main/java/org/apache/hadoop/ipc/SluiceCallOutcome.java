package org.apache.hadoop.ipc;

/**
 * How a {@link SluiceCall} ended: the response body (the protobuf response, length-delimited as
 * the stock engine writes it) or the server's exception class and message. Immutable.
 *
 * @param body the response body, or null for an error
 * @param errorClass the exception's class name, or null on success
 * @param errorMessage the exception's message as the stock server sends it, or null on success
 * @param fatal whether the stock server would close the connection after this error
 */
public record SluiceCallOutcome(byte[] body, String errorClass, String errorMessage, boolean fatal) {
  static SluiceCallOutcome success(byte[] body) {
    return new SluiceCallOutcome(body, null, null, false);
  }

  /** An error outcome. */
  public static SluiceCallOutcome error(String errorClass, String message, boolean fatal) {
    return new SluiceCallOutcome(null, errorClass, message == null ? "" : message, fatal);
  }

  public boolean isSuccess() {
    return body != null;
  }
}
