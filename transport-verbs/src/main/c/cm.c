/*
 * Connection management (librdmacm) entry points of NativeDispatcher.
 *
 * Handles: an event channel is a struct rdma_event_channel *, a connection id a
 * struct rdma_cm_id *. Events are acknowledged inside _getCmEvent, because DiSNI's
 * _ackCmEvent only passes the event type and could not name the event to release;
 * holding no unacknowledged events also keeps rdma_destroy_id from blocking.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include "disni_abi.h"

#define DISPATCHER(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

/* Largest RDMA READ depth requested; bounded by what the device reports. */
#define SLUICE_MAX_RD_ATOMIC 16
/* Retry counters are 3-bit fields in the connection parameters. */
#define SLUICE_MAX_RETRY 7
/* Scatter/gather entries a work request may carry: what the provider ever posts. */
#define SLUICE_MAX_POSTED_SGE 2

static int read_sockaddr(JNIEnv *env, jlong address, struct sockaddr_in *out) {
    if (address == 0) {
        sluice_throw_io_msg(env, "socket address is missing");
        return -1;
    }
    const struct disni_sockaddr_record *rec = SLUICE_PTR(const struct disni_sockaddr_record, address);
    if (rec->family != AF_INET) {
        sluice_throw_io_msg(env, "only IPv4 socket addresses (AF_INET) are supported");
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    out->sin_port = rec->port_be;
    out->sin_addr.s_addr = rec->addr_be;
    return 0;
}

static jint write_sockaddr(const struct sockaddr *sa, jlong address) {
    if (sa == NULL || address == 0 || sa->sa_family != AF_INET) {
        return -EAFNOSUPPORT;
    }
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    struct disni_sockaddr_record *rec = SLUICE_PTR(struct disni_sockaddr_record, address);
    memset(rec, 0, sizeof *rec);
    rec->family = AF_INET;
    rec->port_be = in->sin_port;
    rec->addr_be = in->sin_addr.s_addr;
    return 0;
}

static uint8_t clamp_u8(int value, int limit) {
    if (value < 0) {
        return 0;
    }
    return (uint8_t)(value > limit ? limit : value);
}

/* RDMA READ depths for a connection: as deep as the device allows, up to a fixed cap. */
static void fill_rd_atomic(struct rdma_cm_id *id, struct rdma_conn_param *param) {
    struct ibv_device_attr attr;
    if (id->verbs != NULL && ibv_query_device(id->verbs, &attr) == 0) {
        param->responder_resources = clamp_u8(attr.max_qp_rd_atom, SLUICE_MAX_RD_ATOMIC);
        param->initiator_depth = clamp_u8(attr.max_qp_init_rd_atom, SLUICE_MAX_RD_ATOMIC);
    } else {
        param->responder_resources = 1;
        param->initiator_depth = 1;
    }
}

JNIEXPORT jlong JNICALL DISPATCHER(createEventChannel)(JNIEnv *env, jobject self) {
    (void)self;
    struct rdma_event_channel *channel = rdma_create_event_channel();
    if (channel == NULL) {
        sluice_throw_io(env, "rdma_create_event_channel", errno);
        return -1;
    }
    return SLUICE_HANDLE(channel);
}

JNIEXPORT jlong JNICALL DISPATCHER(createId)(JNIEnv *env, jobject self, jlong channel, jshort ps) {
    (void)self;
    struct rdma_cm_id *id = NULL;
    if (channel == 0) {
        sluice_throw_io_msg(env, "rdma_create_id: no event channel");
        return -1;
    }
    if (rdma_create_id(SLUICE_PTR(struct rdma_event_channel, channel), &id, NULL,
                       (enum rdma_port_space)(uint16_t)ps) != 0) {
        sluice_throw_io(env, "rdma_create_id", errno);
        return -1;
    }
    return SLUICE_HANDLE(id);
}

JNIEXPORT jlong JNICALL DISPATCHER(createQP)(JNIEnv *env, jobject self, jlong id_handle, jlong pd,
                                             jlong send_cq, jlong recv_cq, jint qp_type,
                                             jint max_send_wr, jint max_recv_wr, jint max_inline) {
    (void)self;
    struct rdma_cm_id *id = SLUICE_PTR(struct rdma_cm_id, id_handle);
    if (id == NULL || pd == 0 || send_cq == 0 || recv_cq == 0) {
        sluice_throw_io_msg(env, "rdma_create_qp: id, protection domain and both CQs are required");
        return -1;
    }
    if (max_send_wr <= 0 || max_recv_wr < 0 || max_inline < 0) {
        sluice_throw_io_msg(env, "rdma_create_qp: queue sizes must be positive");
        return -1;
    }
    struct ibv_qp_init_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.send_cq = SLUICE_PTR(struct ibv_cq, send_cq);
    attr.recv_cq = SLUICE_PTR(struct ibv_cq, recv_cq);
    attr.qp_type = (enum ibv_qp_type)qp_type;
    attr.cap.max_send_wr = (uint32_t)max_send_wr;
    attr.cap.max_recv_wr = (uint32_t)max_recv_wr;
    attr.cap.max_inline_data = (uint32_t)max_inline;
    /*
     * DiSNI does not pass SGE limits. The provider posts one scatter/gather entry per work
     * request (two in the lab's batch check); a larger limit only makes every work queue
     * entry bigger.
     */
    struct ibv_pd *protection = SLUICE_PTR(struct ibv_pd, pd);
    attr.cap.max_send_sge = SLUICE_MAX_POSTED_SGE;
    attr.cap.max_recv_sge = SLUICE_MAX_POSTED_SGE;
    if (rdma_create_qp(id, protection, &attr) != 0) {
        sluice_throw_io(env, "rdma_create_qp", errno);
        return -1;
    }
    return SLUICE_HANDLE(id->qp);
}

JNIEXPORT void JNICALL DISPATCHER(bindAddr)(JNIEnv *env, jobject self, jlong id, jlong address) {
    (void)self;
    struct sockaddr_in sin;
    if (id == 0) {
        sluice_throw_io_msg(env, "rdma_bind_addr: no id");
        return;
    }
    if (read_sockaddr(env, address, &sin) != 0) {
        return;
    }
    if (rdma_bind_addr(SLUICE_PTR(struct rdma_cm_id, id), (struct sockaddr *)&sin) != 0) {
        sluice_throw_io(env, "rdma_bind_addr", errno);
    }
}

JNIEXPORT void JNICALL DISPATCHER(listen)(JNIEnv *env, jobject self, jlong id, jint backlog) {
    (void)self;
    if (id == 0) {
        sluice_throw_io_msg(env, "rdma_listen: no id");
        return;
    }
    if (rdma_listen(SLUICE_PTR(struct rdma_cm_id, id), backlog) != 0) {
        sluice_throw_io(env, "rdma_listen", errno);
    }
}

JNIEXPORT void JNICALL DISPATCHER(resolveAddr)(JNIEnv *env, jobject self, jlong id, jlong src,
                                               jlong dst, jint timeout_ms) {
    (void)self;
    struct sockaddr_in source;
    struct sockaddr_in destination;
    if (id == 0) {
        sluice_throw_io_msg(env, "rdma_resolve_addr: no id");
        return;
    }
    if (src != 0 && read_sockaddr(env, src, &source) != 0) {
        return;
    }
    if (read_sockaddr(env, dst, &destination) != 0) {
        return;
    }
    if (rdma_resolve_addr(SLUICE_PTR(struct rdma_cm_id, id), src != 0 ? (struct sockaddr *)&source : NULL,
                          (struct sockaddr *)&destination, timeout_ms) != 0) {
        sluice_throw_io(env, "rdma_resolve_addr", errno);
    }
}

JNIEXPORT void JNICALL DISPATCHER(resolveRoute)(JNIEnv *env, jobject self, jlong id, jint timeout_ms) {
    (void)self;
    if (id == 0) {
        sluice_throw_io_msg(env, "rdma_resolve_route: no id");
        return;
    }
    if (rdma_resolve_route(SLUICE_PTR(struct rdma_cm_id, id), timeout_ms) != 0) {
        sluice_throw_io(env, "rdma_resolve_route", errno);
    }
}

/*
 * Waits up to timeout_ms (negative: no limit) for one event. Writes the listening id and
 * the event's id to the two out-addresses and returns the event type, or -1 when no event
 * arrived in time. A failed channel (error or hang-up on its descriptor, a failed read)
 * throws IOException instead, so that the caller does not mistake it for a quiet one.
 */
JNIEXPORT jint JNICALL DISPATCHER(getCmEvent)(JNIEnv *env, jobject self, jlong channel_handle,
                                              jlong listen_id_out, jlong id_out, jint timeout_ms) {
    (void)self;
    struct rdma_event_channel *channel = SLUICE_PTR(struct rdma_event_channel, channel_handle);
    if (channel == NULL || listen_id_out == 0 || id_out == 0) {
        sluice_throw_io_msg(env, "rdma_get_cm_event: channel and result addresses are required");
        return -1;
    }
    int ready = sluice_wait_readable(channel->fd, timeout_ms);
    if (ready < 0) {
        sluice_throw_io(env, "waiting for an rdma_cm event", -ready);
        return -1;
    }
    if (ready == 0) {
        return -1;
    }
    struct rdma_cm_event *event = NULL;
    if (rdma_get_cm_event(channel, &event) != 0) {
        sluice_throw_io(env, "rdma_get_cm_event", errno != 0 ? errno : EIO);
        return -1;
    }
    *SLUICE_PTR(uint64_t, listen_id_out) = (uint64_t)(uintptr_t)event->listen_id;
    *SLUICE_PTR(uint64_t, id_out) = (uint64_t)(uintptr_t)event->id;
    jint type = (jint)event->event;
    rdma_ack_cm_event(event);
    return type;
}

JNIEXPORT void JNICALL DISPATCHER(connect)(JNIEnv *env, jobject self, jlong id_handle, jint retry,
                                           jint rnr_retry, jlong private_data, jbyte private_len) {
    (void)self;
    struct rdma_cm_id *id = SLUICE_PTR(struct rdma_cm_id, id_handle);
    if (id == NULL) {
        sluice_throw_io_msg(env, "rdma_connect: no id");
        return;
    }
    struct rdma_conn_param param;
    memset(&param, 0, sizeof param);
    param.retry_count = clamp_u8(retry, SLUICE_MAX_RETRY);
    param.rnr_retry_count = clamp_u8(rnr_retry, SLUICE_MAX_RETRY);
    if (private_data != 0 && private_len != 0) {
        param.private_data = SLUICE_PTR(const void, private_data);
        param.private_data_len = (uint8_t)private_len;
    }
    fill_rd_atomic(id, &param);
    if (rdma_connect(id, &param) != 0) {
        sluice_throw_io(env, "rdma_connect", errno);
    }
}

/*
 * Accepts with the READ depths the requester offered, bounded by this device (librdmacm
 * applies both bounds when asked for the maximum): reading deeper than the requester can
 * answer would stall its READs, answering deeper than it asks wastes responder resources.
 */
JNIEXPORT void JNICALL DISPATCHER(accept)(JNIEnv *env, jobject self, jlong id_handle, jint retry,
                                          jint rnr_retry) {
    (void)self;
    struct rdma_cm_id *id = SLUICE_PTR(struct rdma_cm_id, id_handle);
    if (id == NULL) {
        sluice_throw_io_msg(env, "rdma_accept: no id");
        return;
    }
    struct rdma_conn_param param;
    memset(&param, 0, sizeof param);
    param.retry_count = clamp_u8(retry, SLUICE_MAX_RETRY);
    param.rnr_retry_count = clamp_u8(rnr_retry, SLUICE_MAX_RETRY);
    param.responder_resources = RDMA_MAX_RESP_RES;
    param.initiator_depth = RDMA_MAX_INIT_DEPTH;
    if (rdma_accept(id, &param) != 0) {
        sluice_throw_io(env, "rdma_accept", errno);
    }
}

JNIEXPORT jint JNICALL DISPATCHER(ackCmEvent)(JNIEnv *env, jobject self, jint event_type) {
    (void)env; (void)self; (void)event_type;
    return 0; /* already acknowledged by _getCmEvent */
}

JNIEXPORT jint JNICALL DISPATCHER(disconnect)(JNIEnv *env, jobject self, jlong id) {
    (void)env; (void)self;
    if (id == 0) {
        return -EINVAL;
    }
    return rdma_disconnect(SLUICE_PTR(struct rdma_cm_id, id)) == 0 ? 0 : -errno;
}

JNIEXPORT jint JNICALL DISPATCHER(destroyEventChannel)(JNIEnv *env, jobject self, jlong channel) {
    (void)env; (void)self;
    if (channel == 0) {
        return -EINVAL;
    }
    rdma_destroy_event_channel(SLUICE_PTR(struct rdma_event_channel, channel));
    return 0;
}

JNIEXPORT jint JNICALL DISPATCHER(destroyCmId)(JNIEnv *env, jobject self, jlong id) {
    (void)env; (void)self;
    if (id == 0) {
        return -EINVAL;
    }
    return rdma_destroy_id(SLUICE_PTR(struct rdma_cm_id, id)) == 0 ? 0 : -errno;
}

JNIEXPORT jint JNICALL DISPATCHER(destroyQP)(JNIEnv *env, jobject self, jlong id_handle) {
    (void)env; (void)self;
    struct rdma_cm_id *id = SLUICE_PTR(struct rdma_cm_id, id_handle);
    if (id == NULL || id->qp == NULL) {
        return -EINVAL;
    }
    /* rdma_destroy_qp reports nothing; destroy the queue pair itself to learn the outcome. */
    int rc = ibv_destroy_qp(id->qp);
    if (rc != 0) {
        return -rc;
    }
    id->qp = NULL;
    return 0;
}

JNIEXPORT jint JNICALL DISPATCHER(getSrcAddr)(JNIEnv *env, jobject self, jlong id, jlong out) {
    (void)env; (void)self;
    if (id == 0) {
        return -EINVAL;
    }
    return write_sockaddr(rdma_get_local_addr(SLUICE_PTR(struct rdma_cm_id, id)), out);
}

JNIEXPORT jint JNICALL DISPATCHER(getDstAddr)(JNIEnv *env, jobject self, jlong id, jlong out) {
    (void)env; (void)self;
    if (id == 0) {
        return -EINVAL;
    }
    return write_sockaddr(rdma_get_peer_addr(SLUICE_PTR(struct rdma_cm_id, id)), out);
}

JNIEXPORT jint JNICALL DISPATCHER(destroyEp)(JNIEnv *env, jobject self, jlong id) {
    (void)env; (void)self;
    if (id == 0) {
        return -EINVAL;
    }
    rdma_destroy_ep(SLUICE_PTR(struct rdma_cm_id, id));
    return 0;
}
