package io.sluice.transport.crypto;

/**
 * What the handshake hands the record layer: each direction's secret (32 bytes), from which the
 * keys of every epoch of that direction follow ({@link KeySchedule#nextSecret}, {@link
 * KeySchedule#recordKey}, {@link KeySchedule#bodyKey}), and whether the connection is encrypted.
 * Immutable by convention: nobody writes into the arrays.
 */
public record SessionKeys(byte[] clientToServerSecret, byte[] serverToClientSecret, boolean encrypted) {}
