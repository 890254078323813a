package io.sluice.transport.crypto;

/**
 * The record keys of one connection, one per direction, as the key schedule derives them: 16 bytes
 * each for AES-128-GCM when {@code encrypted}, else 32 for HMAC-SHA256. Immutable by convention:
 * nobody writes into the arrays.
 */
public record SessionKeys(byte[] clientToServer, byte[] serverToClient, boolean encrypted) {}
