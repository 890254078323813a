/*
 * The memory layouts exchanged between DiSNI 2.1's Java classes and this library.
 *
 * DiSNI's Java side never hands objects to native code. It passes native handles as jlong
 * (here: the addresses of the libibverbs / librdmacm objects) and serializes work
 * requests, scatter/gather lists, socket addresses and results into direct buffers whose
 * addresses it passes as jlong. The records below describe those buffers byte for byte,
 * in the order DiSNI's serializers (NatIbvSendWR, NatIbvSge, NatIbvRecvWR, SockAddrIn,
 * NatPollCqCall, NatRegMrCall, RdmaCmNat.getCmEvent) write or read them; all integers are
 * in native byte order unless noted. DiSNI asks for the sizes and two offsets through the
 * _get*Size / _get*Offset functions and uses whatever this library reports.
 *
 * Where a record is byte-identical to the libibverbs structure (scatter/gather element,
 * receive work request, work completion) the static assertions in abi.c prove it, and the
 * buffer is handed to libibverbs in place. The send work request record is the 72-byte
 * form DiSNI was written against; current libibverbs' struct ibv_send_wr is larger, so
 * send requests are translated (send_wr.c).
 */
#ifndef SLUICE_DISNI_ABI_H
#define SLUICE_DISNI_ABI_H

#include <stdint.h>
#include <jni.h>

/* The value NativeDispatcher compares with its JVERBS_VERSION constant. */
#define SLUICE_DISNI_JNI_VERSION 32

/* Upper bounds that keep a corrupt or hostile record chain from running away. */
#define SLUICE_MAX_WR_PER_POST 4096
#define SLUICE_MAX_SGE_PER_WR 64

/* NatIbvSge: addr, length, lkey. */
struct disni_sge_record {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
};

/*
 * NatIbvSendWR: wr_id, next, sg_list, num_sge, opcode, send_flags, imm_data, then at
 * REMOTEADDR_OFFSET the RDMA part (remote_addr, rkey, reserved) of a 32-byte union that
 * DiSNI's serializer fills only for RDMA. next and sg_list are absolute addresses of the
 * next record and of the first disni_sge_record, or 0. imm_data is passed through as raw
 * bytes, exactly as the completion side reports it.
 */
struct disni_send_wr_record {
    uint64_t wr_id;
    uint64_t next;
    uint64_t sg_list;
    int32_t num_sge;
    int32_t opcode;
    uint32_t send_flags;
    uint32_t imm_data;
    union {
        struct {
            uint64_t remote_addr;
            uint32_t rkey;
            uint32_t reserved;
        } rdma;
        uint8_t bytes[32];
    } wr;
};

/* NatIbvRecvWR: wr_id, next, sg_list, num_sge (record size 32). */
struct disni_recv_wr_record {
    uint64_t wr_id;
    uint64_t next;
    uint64_t sg_list;
    int32_t num_sge;
    int32_t padding;
};

/* NatPollCqCall.update: one completion as DiSNI reads it (record size 48). */
struct disni_wc_record {
    uint64_t wr_id;
    uint32_t status;
    uint32_t opcode;
    uint32_t vendor_err;
    uint32_t byte_len;
    uint32_t imm_data;
    uint32_t qp_num;
    uint32_t src_qp;
    uint32_t wc_flags;
    uint16_t pkey_index;
    uint16_t slid;
    uint8_t sl;
    uint8_t dlid_path_bits;
    uint8_t padding[2];
};

/*
 * SockAddrIn: family (native order), port and IPv4 address (network order), then zeros.
 * DiSNI sizes the buffer for the largest socket address it knows (28 bytes, the size of
 * struct sockaddr_in6) although it only ever writes IPv4 addresses.
 */
struct disni_sockaddr_record {
    uint16_t family;
    uint16_t port_be;
    uint32_t addr_be;
    uint8_t zero[20];
};

/* RdmaCmNat.getCmEvent: the two ids of an event, written by _getCmEvent. */
struct disni_cm_event_record {
    uint64_t listen_id;
    uint64_t id;
};

/* NatRegMrCall: the three results of _regMr, each at its own out-pointer. */
struct disni_reg_mr_record {
    uint32_t lkey;
    uint32_t rkey;
    uint32_t handle;
};

/* Error helpers shared by all translation units (errors.c). */
void sluice_throw_io(JNIEnv *env, const char *what, int err);
void sluice_throw_io_msg(JNIEnv *env, const char *message);

/* A new Java int[] holding values[0..count-1]; NULL with an exception pending if that failed (jni_values.c). */
jintArray sluice_int_array(JNIEnv *env, const jint *values, jsize count);

/*
 * Waits until fd is readable, at most timeout_ms (negative: no limit), retrying on EINTR.
 * Returns 1 when readable, 0 on timeout, and -errno when the descriptor failed: poll itself
 * failed, or it reported POLLNVAL (-EBADF), POLLERR (-EIO) or POLLHUP (-EPIPE) without
 * data (polling.c).
 */
int sluice_wait_readable(int fd, int timeout_ms);

/* Converts a jlong handle to a pointer; 0 means "no object". */
#define SLUICE_PTR(type, handle) ((type *)(uintptr_t)(handle))
#define SLUICE_HANDLE(ptr) ((jlong)(uintptr_t)(ptr))

/*
 * Translates a chain of DiSNI send records, starting at the record at `first`, into
 * libibverbs work requests, in one pass. Writes them to `*out`, linked through `next`:
 * into the caller's `stack` array (room for `stack_capacity`) while they fit, else into
 * memory allocated here, which the caller frees when `*out != stack`. Returns the number of
 * requests; on a malformed chain returns -1, sets *error to a static description and
 * *failed_index to the index of the offending record (nothing to free then).
 */
struct ibv_send_wr;
int sluice_decode_send_wrs(uint64_t first, struct ibv_send_wr *stack, int stack_capacity,
                           struct ibv_send_wr **out, const char **error, int *failed_index);

#endif
