/*
 * Device resources of NativeDispatcher: protection domains, completion channels and
 * queues, queue pair queries and the accessors DiSNI's Nat* classes call.
 *
 * Handles: a device context is a struct ibv_context *, a protection domain a
 * struct ibv_pd *, a completion channel a struct ibv_comp_channel *, a completion queue a
 * struct ibv_cq *, a queue pair a struct ibv_qp *. Queue pairs are created through
 * rdma_cm (cm.c), which also drives their state transitions.
 */
#include <errno.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#include "disni_abi.h"

#define DISPATCHER(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

JNIEXPORT jlong JNICALL DISPATCHER(getContext)(JNIEnv *env, jobject self, jlong id_handle) {
    (void)self;
    struct rdma_cm_id *id = SLUICE_PTR(struct rdma_cm_id, id_handle);
    if (id == NULL) {
        sluice_throw_io_msg(env, "getContext: no id");
        return -1;
    }
    /* No device is bound before the address is resolved or bound; DiSNI reads -1 as none. */
    return id->verbs != NULL ? SLUICE_HANDLE(id->verbs) : -1;
}

JNIEXPORT jint JNICALL DISPATCHER(getContextFd)(JNIEnv *env, jobject self, jlong context) {
    (void)self;
    if (context == 0) {
        sluice_throw_io_msg(env, "getContextFd: no device context");
        return -1;
    }
    return SLUICE_PTR(struct ibv_context, context)->cmd_fd;
}

JNIEXPORT jint JNICALL DISPATCHER(getContextNumCompVectors)(JNIEnv *env, jobject self, jlong context) {
    (void)self;
    if (context == 0) {
        sluice_throw_io_msg(env, "getContextNumCompVectors: no device context");
        return -1;
    }
    return SLUICE_PTR(struct ibv_context, context)->num_comp_vectors;
}

JNIEXPORT jlong JNICALL DISPATCHER(allocPd)(JNIEnv *env, jobject self, jlong context) {
    (void)self;
    if (context == 0) {
        sluice_throw_io_msg(env, "ibv_alloc_pd: no device context");
        return -1;
    }
    struct ibv_pd *pd = ibv_alloc_pd(SLUICE_PTR(struct ibv_context, context));
    if (pd == NULL) {
        sluice_throw_io(env, "ibv_alloc_pd", errno);
        return -1;
    }
    return SLUICE_HANDLE(pd);
}

JNIEXPORT jint JNICALL DISPATCHER(getPdHandle)(JNIEnv *env, jobject self, jlong pd) {
    (void)self;
    if (pd == 0) {
        sluice_throw_io_msg(env, "getPdHandle: no protection domain");
        return -1;
    }
    return (jint)SLUICE_PTR(struct ibv_pd, pd)->handle;
}

JNIEXPORT jint JNICALL DISPATCHER(deallocPd)(JNIEnv *env, jobject self, jlong pd) {
    (void)env; (void)self;
    if (pd == 0) {
        return -EINVAL;
    }
    return -ibv_dealloc_pd(SLUICE_PTR(struct ibv_pd, pd));
}

JNIEXPORT jlong JNICALL DISPATCHER(createCompChannel)(JNIEnv *env, jobject self, jlong context) {
    (void)self;
    if (context == 0) {
        sluice_throw_io_msg(env, "ibv_create_comp_channel: no device context");
        return -1;
    }
    struct ibv_comp_channel *channel = ibv_create_comp_channel(SLUICE_PTR(struct ibv_context, context));
    if (channel == NULL) {
        sluice_throw_io(env, "ibv_create_comp_channel", errno);
        return -1;
    }
    return SLUICE_HANDLE(channel);
}

JNIEXPORT jint JNICALL DISPATCHER(destroyCompChannel)(JNIEnv *env, jobject self, jlong channel) {
    (void)env; (void)self;
    if (channel == 0) {
        return -EINVAL;
    }
    return -ibv_destroy_comp_channel(SLUICE_PTR(struct ibv_comp_channel, channel));
}

JNIEXPORT jlong JNICALL DISPATCHER(createCQ)(JNIEnv *env, jobject self, jlong context, jlong channel,
                                             jint entries, jint comp_vector) {
    (void)self;
    if (context == 0) {
        sluice_throw_io_msg(env, "ibv_create_cq: no device context");
        return -1;
    }
    if (entries <= 0) {
        sluice_throw_io_msg(env, "ibv_create_cq: the number of entries must be positive");
        return -1;
    }
    struct ibv_cq *cq = ibv_create_cq(SLUICE_PTR(struct ibv_context, context), entries, NULL,
                                      SLUICE_PTR(struct ibv_comp_channel, channel), comp_vector);
    if (cq == NULL) {
        sluice_throw_io(env, "ibv_create_cq", errno);
        return -1;
    }
    return SLUICE_HANDLE(cq);
}

JNIEXPORT jint JNICALL DISPATCHER(destroyCQ)(JNIEnv *env, jobject self, jlong cq) {
    (void)env; (void)self;
    if (cq == 0) {
        return -EINVAL;
    }
    return -ibv_destroy_cq(SLUICE_PTR(struct ibv_cq, cq));
}

JNIEXPORT jint JNICALL DISPATCHER(getQpNum)(JNIEnv *env, jobject self, jlong qp) {
    (void)self;
    if (qp == 0) {
        sluice_throw_io_msg(env, "getQpNum: no queue pair");
        return -1;
    }
    return (jint)SLUICE_PTR(struct ibv_qp, qp)->qp_num;
}

/*
 * DiSNI 2.1 calls this with no attribute buffer (0): rdma_cm moves the queue pair through
 * its states, so the call reports the current state (enum ibv_qp_state) instead.
 */
JNIEXPORT jint JNICALL DISPATCHER(modifyQP)(JNIEnv *env, jobject self, jlong qp, jlong attributes) {
    (void)self;
    if (qp == 0) {
        sluice_throw_io_msg(env, "modifyQP: no queue pair");
        return -1;
    }
    if (attributes != 0) {
        sluice_throw_io_msg(env, "modifyQP: explicit attributes are not supported; rdma_cm drives queue pair state");
        return -1;
    }
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init;
    int rc = ibv_query_qp(SLUICE_PTR(struct ibv_qp, qp), &attr, IBV_QP_STATE, &init);
    if (rc != 0) {
        sluice_throw_io(env, "ibv_query_qp", rc);
        return -1;
    }
    return (jint)attr.qp_state;
}

/*
 * On-demand paging support of the device: -1 when the device has none, else the bit set
 * of operations (enum ibv_odp_transport_cap_bits) it supports on RC queue pairs.
 */
JNIEXPORT jint JNICALL DISPATCHER(queryOdpSupport)(JNIEnv *env, jobject self, jlong context) {
    (void)env; (void)self;
    if (context == 0) {
        return -1;
    }
    struct ibv_device_attr_ex attr;
    memset(&attr, 0, sizeof attr);
    if (ibv_query_device_ex(SLUICE_PTR(struct ibv_context, context), NULL, &attr) != 0) {
        return -1;
    }
    if ((attr.odp_caps.general_caps & IBV_ODP_SUPPORT) == 0) {
        return -1;
    }
    return (jint)attr.odp_caps.per_transport_caps.rc_odp_caps;
}
