/*
 * io.sluice.transport.verbs.abi.NativeAbi: lets Java code ask this library which layouts
 * it was compiled with, decode send records the way _postSend does, and count devices.
 * Used by the availability check and by the layout tests, which need no RDMA device.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "disni_abi.h"

#define ABI(name) Java_io_sluice_transport_verbs_abi_NativeAbi_##name

struct layout_entry {
    const char *name;
    int value;
};

#define SIZE(rec) { #rec ".size", (int)sizeof(struct disni_##rec##_record) }
#define OFFSET(rec, field, label) { #rec "." label, (int)offsetof(struct disni_##rec##_record, field) }

static const struct layout_entry LAYOUT[] = {
    SIZE(send_wr),
    OFFSET(send_wr, wr_id, "wr_id"),
    OFFSET(send_wr, next, "next"),
    OFFSET(send_wr, sg_list, "sg_list"),
    OFFSET(send_wr, num_sge, "num_sge"),
    OFFSET(send_wr, opcode, "opcode"),
    OFFSET(send_wr, send_flags, "send_flags"),
    OFFSET(send_wr, imm_data, "imm_data"),
    OFFSET(send_wr, wr.rdma.remote_addr, "remote_addr"),
    OFFSET(send_wr, wr.rdma.rkey, "rkey"),
    OFFSET(send_wr, wr.rdma.reserved, "reserved"),
    SIZE(sge),
    OFFSET(sge, addr, "addr"),
    OFFSET(sge, length, "length"),
    OFFSET(sge, lkey, "lkey"),
    SIZE(recv_wr),
    OFFSET(recv_wr, wr_id, "wr_id"),
    OFFSET(recv_wr, next, "next"),
    OFFSET(recv_wr, sg_list, "sg_list"),
    OFFSET(recv_wr, num_sge, "num_sge"),
    SIZE(wc),
    OFFSET(wc, wr_id, "wr_id"),
    OFFSET(wc, status, "status"),
    OFFSET(wc, opcode, "opcode"),
    OFFSET(wc, vendor_err, "vendor_err"),
    OFFSET(wc, byte_len, "byte_len"),
    OFFSET(wc, imm_data, "imm_data"),
    OFFSET(wc, qp_num, "qp_num"),
    OFFSET(wc, src_qp, "src_qp"),
    OFFSET(wc, wc_flags, "wc_flags"),
    OFFSET(wc, pkey_index, "pkey_index"),
    OFFSET(wc, slid, "slid"),
    OFFSET(wc, sl, "sl"),
    OFFSET(wc, dlid_path_bits, "dlid_path_bits"),
    SIZE(sockaddr),
    OFFSET(sockaddr, family, "family"),
    OFFSET(sockaddr, port_be, "port"),
    OFFSET(sockaddr, addr_be, "addr"),
    SIZE(cm_event),
    OFFSET(cm_event, listen_id, "listen_id"),
    OFFSET(cm_event, id, "id"),
    SIZE(reg_mr),
    OFFSET(reg_mr, lkey, "lkey"),
    OFFSET(reg_mr, rkey, "rkey"),
    OFFSET(reg_mr, handle, "handle"),
    /* The libibverbs structures, for comparison with the records above. */
    { "ibv_send_wr.size", (int)sizeof(struct ibv_send_wr) },
    { "ibv_sge.size", (int)sizeof(struct ibv_sge) },
    { "ibv_recv_wr.size", (int)sizeof(struct ibv_recv_wr) },
    { "ibv_wc.size", (int)sizeof(struct ibv_wc) },
};

JNIEXPORT jint JNICALL ABI(version0)(JNIEnv *env, jclass cls) {
    (void)env; (void)cls;
    return SLUICE_DISNI_JNI_VERSION;
}

JNIEXPORT jint JNICALL ABI(layout0)(JNIEnv *env, jclass cls, jstring name) {
    (void)cls;
    if (name == NULL) {
        return -1;
    }
    const char *text = (*env)->GetStringUTFChars(env, name, NULL);
    if (text == NULL) {
        return -1;
    }
    int value = -1;
    for (size_t i = 0; i < sizeof LAYOUT / sizeof LAYOUT[0]; i++) {
        if (strcmp(LAYOUT[i].name, text) == 0) {
            value = LAYOUT[i].value;
            break;
        }
    }
    (*env)->ReleaseStringUTFChars(env, name, text);
    return value;
}

JNIEXPORT jint JNICALL ABI(deviceCount0)(JNIEnv *env, jclass cls) {
    (void)env; (void)cls;
    int count = 0;
    struct ibv_device **devices = ibv_get_device_list(&count);
    if (devices == NULL) {
        return errno != 0 ? -errno : -ENODEV;
    }
    ibv_free_device_list(devices);
    return count;
}

/* Fields per decoded request, before its scatter/gather entries (3 values each). */
#define DECODED_WR_FIELDS 8

JNIEXPORT jlongArray JNICALL ABI(decodeSendWrs0)(JNIEnv *env, jclass cls, jlong address) {
    (void)cls;
    const char *error = NULL;
    int failed = 0;
    struct ibv_send_wr one;
    struct ibv_send_wr *wrs = NULL;
    int count = sluice_decode_send_wrs((uint64_t)address, &one, 1, &wrs, &error, &failed);
    if (count < 0) {
        char message[256];
        snprintf(message, sizeof message, "ibv_post_send: work request %d: %s", failed, error);
        sluice_throw_io_msg(env, message);
        return NULL;
    }
    size_t total = 0;
    for (int i = 0; i < count; i++) {
        total += DECODED_WR_FIELDS + 3 * (size_t)wrs[i].num_sge;
    }
    jlong *values = calloc(total > 0 ? total : 1, sizeof *values);
    if (values == NULL) {
        if (wrs != &one) {
            free(wrs);
        }
        sluice_throw_io(env, "decodeSendWrs", ENOMEM);
        return NULL;
    }
    size_t at = 0;
    for (int i = 0; i < count; i++) {
        const struct ibv_send_wr *wr = &wrs[i];
        values[at++] = (jlong)wr->wr_id;
        values[at++] = (jlong)wr->opcode;
        values[at++] = (jlong)wr->send_flags;
        values[at++] = (jlong)(uint32_t)wr->imm_data;
        values[at++] = (jlong)wr->num_sge;
        values[at++] = (jlong)wr->wr.rdma.remote_addr;
        values[at++] = (jlong)wr->wr.rdma.rkey;
        values[at++] = (jlong)(wr->next == NULL ? -1 : wr->next - wrs);
        for (int s = 0; s < wr->num_sge; s++) {
            values[at++] = (jlong)wr->sg_list[s].addr;
            values[at++] = (jlong)wr->sg_list[s].length;
            values[at++] = (jlong)wr->sg_list[s].lkey;
        }
    }
    if (wrs != &one) {
        free(wrs);
    }
    jlongArray result = (*env)->NewLongArray(env, (jsize)total);
    if (result != NULL) {
        (*env)->SetLongArrayRegion(env, result, 0, (jsize)total, values);
    }
    free(values);
    return result;
}
