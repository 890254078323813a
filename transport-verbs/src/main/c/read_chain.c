/*
 * The project's own READ posting (io.sluice.transport.verbs.rc.ReadChain): a ring of
 * libibverbs work requests, each with its one scatter/gather entry, built once when the
 * ring is created (opcode, SGE list, count) and kept in native memory that Java writes
 * through a direct buffer. Per READ Java changes only the id, flags, remote address, rkey
 * and the SGE's address, length and key; posting links the slots of one batch into a chain
 * and hands it to ibv_post_send as it is. Nothing is translated or allocated per READ.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "disni_abi.h"

#define CHAIN(name) Java_io_sluice_transport_verbs_rc_ReadChain_##name

/* A ring holds at most this many slots: a queue pair never has more READs outstanding. */
#define SLUICE_MAX_CHAIN 4096

struct read_slot {
    struct ibv_send_wr wr;
    struct ibv_sge sge;
};

/* Order of the values layout0 returns. */
enum {
    L_STRIDE, L_WR_ID, L_NEXT, L_SEND_FLAGS, L_OPCODE, L_NUM_SGE, L_REMOTE_ADDR, L_RKEY,
    L_SGE_ADDR, L_SGE_LENGTH, L_SGE_LKEY, L_FIELDS
};

JNIEXPORT jintArray JNICALL CHAIN(layout0)(JNIEnv *env, jclass cls) {
    (void)cls;
    jint values[L_FIELDS];
    values[L_STRIDE] = (jint)sizeof(struct read_slot);
    values[L_WR_ID] = (jint)offsetof(struct read_slot, wr.wr_id);
    values[L_NEXT] = (jint)offsetof(struct read_slot, wr.next);
    values[L_SEND_FLAGS] = (jint)offsetof(struct read_slot, wr.send_flags);
    values[L_OPCODE] = (jint)offsetof(struct read_slot, wr.opcode);
    values[L_NUM_SGE] = (jint)offsetof(struct read_slot, wr.num_sge);
    values[L_REMOTE_ADDR] = (jint)offsetof(struct read_slot, wr.wr.rdma.remote_addr);
    values[L_RKEY] = (jint)offsetof(struct read_slot, wr.wr.rdma.rkey);
    values[L_SGE_ADDR] = (jint)offsetof(struct read_slot, sge.addr);
    values[L_SGE_LENGTH] = (jint)offsetof(struct read_slot, sge.length);
    values[L_SGE_LKEY] = (jint)offsetof(struct read_slot, sge.lkey);
    return sluice_int_array(env, values, L_FIELDS);
}

/* Allocates and builds a ring of `capacity` READ slots; returns a direct buffer over it. */
JNIEXPORT jobject JNICALL CHAIN(create0)(JNIEnv *env, jclass cls, jint capacity) {
    (void)cls;
    if (capacity < 1 || capacity > SLUICE_MAX_CHAIN) {
        char message[96];
        snprintf(message, sizeof message, "a READ chain of %d slots (1 to %d)", (int)capacity, SLUICE_MAX_CHAIN);
        sluice_throw_io_msg(env, message);
        return NULL;
    }
    struct read_slot *slots = calloc((size_t)capacity, sizeof *slots);
    if (slots == NULL) {
        sluice_throw_io(env, "allocating a READ chain", ENOMEM);
        return NULL;
    }
    for (jint i = 0; i < capacity; i++) {
        slots[i].wr.opcode = IBV_WR_RDMA_READ;
        slots[i].wr.sg_list = &slots[i].sge;
        slots[i].wr.num_sge = 1;
    }
    jobject buffer = (*env)->NewDirectByteBuffer(env, slots, (jlong)capacity * (jlong)sizeof *slots);
    if (buffer == NULL) {
        free(slots);
    }
    return buffer;
}

JNIEXPORT jlong JNICALL CHAIN(address0)(JNIEnv *env, jclass cls, jobject buffer) {
    (void)cls;
    return (jlong)(uintptr_t)(*env)->GetDirectBufferAddress(env, buffer);
}

JNIEXPORT void JNICALL CHAIN(free0)(JNIEnv *env, jclass cls, jlong base) {
    (void)env; (void)cls;
    free(SLUICE_PTR(struct read_slot, base));
}

/*
 * Links `count` slots from `first` (wrapping at `capacity`) into one chain; the last one's
 * next is NULL whatever it was before. Returns the head, or NULL for a bad range.
 */
static struct ibv_send_wr *link_chain(jlong base, jint capacity, jint first, jint count) {
    if (base == 0 || capacity < 1 || first < 0 || first >= capacity || count < 1 || count > capacity) {
        return NULL;
    }
    struct read_slot *slots = SLUICE_PTR(struct read_slot, base);
    jint at = first;
    for (jint i = 0; i < count; i++) {
        jint next = at + 1 == capacity ? 0 : at + 1;
        slots[at].wr.next = i + 1 == count ? NULL : &slots[next].wr;
        at = next;
    }
    return &slots[first].wr;
}

/* Links the chain without posting it (for tests: what posting would hand to the device). */
JNIEXPORT void JNICALL CHAIN(link0)(JNIEnv *env, jclass cls, jlong base, jint capacity, jint first, jint count) {
    (void)cls;
    if (link_chain(base, capacity, first, count) == NULL) {
        sluice_throw_io_msg(env, "READ chain: slot range out of bounds");
    }
}

/*
 * Posts `count` slots from `first` as one chain. On failure the IOException names the
 * position in the chain and the wr_id of the request ibv_post_send refused: the ones before
 * it were posted, it and the ones after it were not.
 */
JNIEXPORT void JNICALL CHAIN(post0)(JNIEnv *env, jclass cls, jlong qp, jlong base, jint capacity, jint first,
                                    jint count) {
    (void)cls;
    struct ibv_send_wr *head = link_chain(base, capacity, first, count);
    if (qp == 0 || head == NULL) {
        sluice_throw_io_msg(env, "ibv_post_send: no queue pair, or a READ chain range out of bounds");
        return;
    }
    struct ibv_send_wr *bad = NULL;
    int rc = ibv_post_send(SLUICE_PTR(struct ibv_qp, qp), head, &bad);
    if (rc != 0) {
        long index = -1;
        for (struct ibv_send_wr *w = head; bad != NULL && w != NULL; w = w->next) {
            index++;
            if (w == bad) {
                break;
            }
        }
        char reason[128];
        char message[256];
        snprintf(message, sizeof message, "ibv_post_send refused READ %ld of %d (wr_id %llu): %s (errno %d)",
                 bad != NULL ? index : -1L, (int)count, bad != NULL ? (unsigned long long)bad->wr_id : 0ULL,
                 strerror_r(rc, reason, sizeof reason), rc);
        sluice_throw_io_msg(env, message);
    }
}
