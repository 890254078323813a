/**
 * Registered memory as a tree, and the one reference-count contract.
 *
 * <p>{@link io.sluice.transport.memory.RegisteredAllocator} is the tree: a root over a {@link
 * io.sluice.transport.Transport} and children with byte limits, each handing out regions the
 * transport registered, reusing released ones by size class ({@link
 * io.sluice.transport.memory.RegionSizes}), letting a caller wait for room until a deadline, and
 * failing at close with the name, count and sizes of whatever is still out. An integration keeps
 * one tree per transport it opens and a child per audience (READ destinations, bodies for one
 * peer, a stream's staging).
 *
 * <p>{@link io.sluice.transport.memory.AbstractReferenceCounted} is the count every shared object
 * of the project follows: it starts at 1, {@code retain}/{@code release} move it, one {@code
 * deallocate} runs at 0, and nothing goes past it.
 */
package io.sluice.transport.memory;
