/*
 * Version and layout queries of NativeDispatcher, and the compile-time proof that the
 * records DiSNI serializes match what this library and libibverbs read (disni_abi.h).
 */
#include <stddef.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>

#include "disni_abi.h"

#define SAME_FIELD(a, fa, b, fb) \
    _Static_assert(offsetof(a, fa) == offsetof(b, fb) && sizeof(((a *)0)->fa) == sizeof(((b *)0)->fb), \
                   #a "." #fa " does not match " #b "." #fb)

/* The sizes and offsets DiSNI 2.1 compiles in (NatIbvSendWR, NatIbvSge, ...). */
_Static_assert(sizeof(struct disni_send_wr_record) == 72, "send record size");
_Static_assert(offsetof(struct disni_send_wr_record, send_flags) == 32, "send_flags offset");
_Static_assert(offsetof(struct disni_send_wr_record, wr.rdma.remote_addr) == 40, "remote_addr offset");
_Static_assert(offsetof(struct disni_send_wr_record, wr.rdma.rkey) == 48, "rkey offset");
_Static_assert(sizeof(struct disni_sge_record) == 16, "sge record size");
_Static_assert(sizeof(struct disni_recv_wr_record) == 32, "recv record size");
_Static_assert(sizeof(struct disni_wc_record) == 48, "wc record size");
_Static_assert(sizeof(struct disni_sockaddr_record) == 28, "sockaddr record size");

/* Records handed to libibverbs in place must be byte-identical to its structures. */
_Static_assert(sizeof(struct disni_sge_record) == sizeof(struct ibv_sge), "ibv_sge size");
SAME_FIELD(struct disni_sge_record, addr, struct ibv_sge, addr);
SAME_FIELD(struct disni_sge_record, length, struct ibv_sge, length);
SAME_FIELD(struct disni_sge_record, lkey, struct ibv_sge, lkey);

_Static_assert(sizeof(struct disni_recv_wr_record) == sizeof(struct ibv_recv_wr), "ibv_recv_wr size");
SAME_FIELD(struct disni_recv_wr_record, wr_id, struct ibv_recv_wr, wr_id);
SAME_FIELD(struct disni_recv_wr_record, next, struct ibv_recv_wr, next);
SAME_FIELD(struct disni_recv_wr_record, sg_list, struct ibv_recv_wr, sg_list);
SAME_FIELD(struct disni_recv_wr_record, num_sge, struct ibv_recv_wr, num_sge);

_Static_assert(sizeof(struct disni_wc_record) == sizeof(struct ibv_wc), "ibv_wc size");
SAME_FIELD(struct disni_wc_record, wr_id, struct ibv_wc, wr_id);
SAME_FIELD(struct disni_wc_record, status, struct ibv_wc, status);
SAME_FIELD(struct disni_wc_record, opcode, struct ibv_wc, opcode);
SAME_FIELD(struct disni_wc_record, vendor_err, struct ibv_wc, vendor_err);
SAME_FIELD(struct disni_wc_record, byte_len, struct ibv_wc, byte_len);
SAME_FIELD(struct disni_wc_record, imm_data, struct ibv_wc, imm_data);
SAME_FIELD(struct disni_wc_record, qp_num, struct ibv_wc, qp_num);
SAME_FIELD(struct disni_wc_record, src_qp, struct ibv_wc, src_qp);
SAME_FIELD(struct disni_wc_record, wc_flags, struct ibv_wc, wc_flags);
SAME_FIELD(struct disni_wc_record, pkey_index, struct ibv_wc, pkey_index);
SAME_FIELD(struct disni_wc_record, slid, struct ibv_wc, slid);
SAME_FIELD(struct disni_wc_record, sl, struct ibv_wc, sl);
SAME_FIELD(struct disni_wc_record, dlid_path_bits, struct ibv_wc, dlid_path_bits);

_Static_assert(sizeof(struct disni_sockaddr_record) == sizeof(struct sockaddr_in6), "sockaddr_in6 size");
SAME_FIELD(struct disni_sockaddr_record, family, struct sockaddr_in, sin_family);
SAME_FIELD(struct disni_sockaddr_record, port_be, struct sockaddr_in, sin_port);
SAME_FIELD(struct disni_sockaddr_record, addr_be, struct sockaddr_in, sin_addr);

/* Opcodes, flags and access bits: DiSNI passes the numeric values of the C enums. */
_Static_assert(IBV_WR_RDMA_WRITE == 0 && IBV_WR_RDMA_WRITE_WITH_IMM == 1 && IBV_WR_SEND == 2 &&
               IBV_WR_SEND_WITH_IMM == 3 && IBV_WR_RDMA_READ == 4, "IbvSendWR.IbvWrOcode");
_Static_assert(IBV_SEND_FENCE == 1 && IBV_SEND_SIGNALED == 2 && IBV_SEND_SOLICITED == 4 &&
               IBV_SEND_INLINE == 8, "IbvSendWR send flags");
_Static_assert(IBV_ACCESS_LOCAL_WRITE == 1 && IBV_ACCESS_REMOTE_WRITE == 2 && IBV_ACCESS_REMOTE_READ == 4 &&
               IBV_ACCESS_REMOTE_ATOMIC == 8 && IBV_ACCESS_MW_BIND == 16 && IBV_ACCESS_ON_DEMAND == 64,
               "IbvMr access flags");
_Static_assert(IBV_WC_SEND == 0 && IBV_WC_RDMA_WRITE == 1 && IBV_WC_RDMA_READ == 2 && IBV_WC_RECV == 128 &&
               IBV_WC_RECV_RDMA_WITH_IMM == 129, "IbvWC.IbvWcOpcode");

#define DISPATCHER(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

JNIEXPORT jint JNICALL DISPATCHER(getVersion)(JNIEnv *env, jobject self) {
    (void)env; (void)self;
    return SLUICE_DISNI_JNI_VERSION;
}

JNIEXPORT jint JNICALL DISPATCHER(getSockAddrInSize)(JNIEnv *env, jobject self) {
    (void)env; (void)self;
    return (jint)sizeof(struct disni_sockaddr_record);
}

JNIEXPORT jint JNICALL DISPATCHER(getIbvRecvWRSize)(JNIEnv *env, jobject self) {
    (void)env; (void)self;
    return (jint)sizeof(struct disni_recv_wr_record);
}

JNIEXPORT jint JNICALL DISPATCHER(getIbvSendWRSize)(JNIEnv *env, jobject self) {
    (void)env; (void)self;
    return (jint)sizeof(struct disni_send_wr_record);
}

JNIEXPORT jint JNICALL DISPATCHER(getIbvSgeSize)(JNIEnv *env, jobject self) {
    (void)env; (void)self;
    return (jint)sizeof(struct disni_sge_record);
}

JNIEXPORT jint JNICALL DISPATCHER(getIbvWCSize)(JNIEnv *env, jobject self) {
    (void)env; (void)self;
    return (jint)sizeof(struct disni_wc_record);
}

JNIEXPORT jint JNICALL DISPATCHER(getRemoteAddressOffset)(JNIEnv *env, jobject self) {
    (void)env; (void)self;
    return (jint)offsetof(struct disni_send_wr_record, wr.rdma.remote_addr);
}

JNIEXPORT jint JNICALL DISPATCHER(getRKeyOffset)(JNIEnv *env, jobject self) {
    (void)env; (void)self;
    return (jint)offsetof(struct disni_send_wr_record, wr.rdma.rkey);
}
