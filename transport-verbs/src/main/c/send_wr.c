/*
 * Posting work requests. DiSNI's send records (struct disni_send_wr_record) are translated
 * into libibverbs' struct ibv_send_wr; their scatter/gather lists and DiSNI's receive
 * records already have libibverbs' layout (abi.c) and are used in place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "disni_abi.h"

#define DISPATCHER(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

/* Requests up to this many are translated on the stack. */
#define SLUICE_STACK_WRS 16

static int supported_opcode(int32_t opcode) {
    switch (opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_READ:
        return 1;
    default:
        /* DiSNI serializes only the RDMA part of the union: atomics cannot be expressed. */
        return 0;
    }
}

/* Checks one record; returns NULL when it can be posted, else what is wrong with it. */
static const char *check_record(const struct disni_send_wr_record *rec) {
    if (rec->num_sge < 0 || rec->num_sge > SLUICE_MAX_SGE_PER_WR) {
        return "num_sge out of range";
    }
    if (rec->num_sge > 0 && rec->sg_list == 0) {
        return "num_sge > 0 without a scatter/gather list";
    }
    if (!supported_opcode(rec->opcode)) {
        return "unsupported work request opcode (RDMA write/read and send are supported)";
    }
    return NULL;
}

int sluice_decode_send_wrs(uint64_t first, struct ibv_send_wr *stack, int stack_capacity,
                           struct ibv_send_wr **out, const char **error, int *failed_index) {
    struct ibv_send_wr *wrs = stack;
    int capacity = stack_capacity;
    int count = 0;
    for (uint64_t at = first; at != 0; count++) {
        const struct disni_send_wr_record *rec = (const struct disni_send_wr_record *)(uintptr_t)at;
        *error = count == SLUICE_MAX_WR_PER_POST
                ? "too many work requests in one post (or a cyclic chain)" : check_record(rec);
        if (*error == NULL && count == capacity) {
            /* Grows geometrically; the records already translated move with it. */
            int grown = capacity < 8 ? 16 : capacity * 2;
            struct ibv_send_wr *bigger = calloc((size_t)grown, sizeof *bigger);
            if (bigger == NULL) {
                *error = "out of memory translating work requests";
            } else {
                if (count > 0) {
                    memcpy(bigger, wrs, (size_t)count * sizeof *bigger);
                }
                if (wrs != stack) {
                    free(wrs);
                }
                wrs = bigger;
                capacity = grown;
                for (int i = 1; i < count; i++) {
                    wrs[i - 1].next = &wrs[i];
                }
            }
        }
        if (*error != NULL) {
            if (wrs != stack) {
                free(wrs);
            }
            *failed_index = count;
            *out = NULL;
            return -1;
        }
        struct ibv_send_wr *wr = &wrs[count];
        memset(wr, 0, sizeof *wr);
        wr->wr_id = rec->wr_id;
        wr->sg_list = (struct ibv_sge *)(uintptr_t)rec->sg_list;
        wr->num_sge = rec->num_sge;
        wr->opcode = (enum ibv_wr_opcode)rec->opcode;
        wr->send_flags = rec->send_flags;
        wr->imm_data = rec->imm_data;
        wr->wr.rdma.remote_addr = rec->wr.rdma.remote_addr;
        wr->wr.rdma.rkey = rec->wr.rdma.rkey;
        if (count > 0) {
            wrs[count - 1].next = wr;
        }
        at = rec->next;
    }
    *out = wrs;
    return count;
}

/*
 * Posts the chain. On failure the IOException names the index of the work request that
 * was malformed or that ibv_post_send refused, and the wr_id it carried: the ones before
 * it were posted (and will complete), it and the ones after it were not.
 */
JNIEXPORT void JNICALL DISPATCHER(postSend)(JNIEnv *env, jobject self, jlong qp, jlong wr_list) {
    (void)self;
    if (qp == 0 || wr_list == 0) {
        sluice_throw_io_msg(env, "ibv_post_send: queue pair and work request list are required");
        return;
    }
    struct ibv_send_wr on_stack[SLUICE_STACK_WRS];
    struct ibv_send_wr *wrs = NULL;
    const char *error = NULL;
    int failed = 0;
    int count = sluice_decode_send_wrs((uint64_t)wr_list, on_stack, SLUICE_STACK_WRS, &wrs, &error, &failed);
    char message[256];
    if (count < 0) {
        snprintf(message, sizeof message, "ibv_post_send: work request %d: %s", failed, error);
        sluice_throw_io_msg(env, message);
        return;
    }
    struct ibv_send_wr *bad = NULL;
    int rc = ibv_post_send(SLUICE_PTR(struct ibv_qp, qp), wrs, &bad);
    if (rc != 0) {
        long index = bad != NULL ? (long)(bad - wrs) : -1;
        unsigned long long wr_id = bad != NULL ? (unsigned long long)bad->wr_id : 0;
        char reason[128];
        snprintf(message, sizeof message, "ibv_post_send refused work request %ld of %d (wr_id %llu): %s (errno %d)",
                 index, count, wr_id, strerror_r(rc, reason, sizeof reason), rc);
        sluice_throw_io_msg(env, message);
    }
    if (wrs != on_stack) {
        free(wrs);
    }
}

JNIEXPORT void JNICALL DISPATCHER(postRecv)(JNIEnv *env, jobject self, jlong qp, jlong wr_list) {
    (void)self;
    if (qp == 0 || wr_list == 0) {
        sluice_throw_io_msg(env, "ibv_post_recv: queue pair and work request list are required");
        return;
    }
    struct ibv_recv_wr *bad = NULL;
    int rc = ibv_post_recv(SLUICE_PTR(struct ibv_qp, qp), SLUICE_PTR(struct ibv_recv_wr, wr_list), &bad);
    if (rc != 0) {
        sluice_throw_io(env, "ibv_post_recv", rc);
    }
}
