package io.sluice.transport;

/**
 * Permission for one more peer to READ a region, from {@link RegisteredRegion#allowReader}.
 * Closing it withdraws the permission (idempotent): new READs by that peer then find the key
 * unknown. Grants of the same peer nest: the peer keeps access until each is closed. Thread safe.
 */
@FunctionalInterface
public interface ReaderGrant extends AutoCloseable {
  @Override
  void close();
}
