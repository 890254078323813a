/*
 * Posting work requests. DiSNI's send records (struct disni_send_wr_record) are translated
 * into libibverbs' struct ibv_send_wr; their scatter/gather lists and DiSNI's receive
 * records already have libibverbs' layout (abi.c) and are used in place.
 */
#include <errno.h>
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

int sluice_decode_send_wrs(uint64_t first, struct ibv_send_wr *out, int capacity, const char **error) {
    int count = 0;
    for (uint64_t at = first; at != 0;) {
        if (count == SLUICE_MAX_WR_PER_POST) {
            *error = "too many work requests in one post (or a cyclic chain)";
            return -1;
        }
        const struct disni_send_wr_record *rec = (const struct disni_send_wr_record *)(uintptr_t)at;
        if (rec->num_sge < 0 || rec->num_sge > SLUICE_MAX_SGE_PER_WR) {
            *error = "num_sge out of range";
            return -1;
        }
        if (rec->num_sge > 0 && rec->sg_list == 0) {
            *error = "num_sge > 0 without a scatter/gather list";
            return -1;
        }
        if (!supported_opcode(rec->opcode)) {
            *error = "unsupported work request opcode (RDMA write/read and send are supported)";
            return -1;
        }
        if (count < capacity) {
            struct ibv_send_wr *wr = &out[count];
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
                out[count - 1].next = wr;
            }
        }
        count++;
        at = rec->next;
    }
    return count;
}

JNIEXPORT void JNICALL DISPATCHER(postSend)(JNIEnv *env, jobject self, jlong qp, jlong wr_list) {
    (void)self;
    if (qp == 0 || wr_list == 0) {
        sluice_throw_io_msg(env, "ibv_post_send: queue pair and work request list are required");
        return;
    }
    const char *error = NULL;
    int count = sluice_decode_send_wrs((uint64_t)wr_list, NULL, 0, &error);
    if (count < 0) {
        sluice_throw_io_msg(env, error);
        return;
    }
    struct ibv_send_wr on_stack[SLUICE_STACK_WRS];
    struct ibv_send_wr *wrs = on_stack;
    if (count > SLUICE_STACK_WRS) {
        wrs = calloc((size_t)count, sizeof *wrs);
        if (wrs == NULL) {
            sluice_throw_io(env, "ibv_post_send", ENOMEM);
            return;
        }
    }
    sluice_decode_send_wrs((uint64_t)wr_list, wrs, count, &error);
    struct ibv_send_wr *bad = NULL;
    int rc = ibv_post_send(SLUICE_PTR(struct ibv_qp, qp), wrs, &bad);
    if (wrs != on_stack) {
        free(wrs);
    }
    if (rc != 0) {
        sluice_throw_io(env, "ibv_post_send", rc);
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
