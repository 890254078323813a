/*
 * The project's own entry point beside DiSNI's: what a queue pair's state and limits are
 * now (ibv_query_qp). DiSNI 2.1 has no call for it; the provider needs the state to tell a
 * queue pair its peer broke (an access violation puts the responder in the error state)
 * from one that was merely disconnected.
 */
#include <string.h>
#include <infiniband/verbs.h>

#include "disni_abi.h"

#define QUERY(name) Java_io_sluice_transport_verbs_rc_QueuePairQuery_##name

/* Order of the values query0 returns. */
enum { QP_STATE, QP_MAX_SEND_SGE, QP_MAX_RECV_SGE, QP_MAX_RD_ATOMIC, QP_MAX_DEST_RD_ATOMIC, QP_FIELDS };

JNIEXPORT jintArray JNICALL QUERY(query0)(JNIEnv *env, jclass cls, jlong qp_handle) {
    (void)cls;
    struct ibv_qp *qp = SLUICE_PTR(struct ibv_qp, qp_handle);
    if (qp == NULL) {
        sluice_throw_io_msg(env, "ibv_query_qp: no queue pair");
        return NULL;
    }
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init;
    memset(&attr, 0, sizeof attr);
    memset(&init, 0, sizeof init);
    int rc = ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC,
                          &init);
    if (rc != 0) {
        sluice_throw_io(env, "ibv_query_qp", rc);
        return NULL;
    }
    jint values[QP_FIELDS];
    values[QP_STATE] = (jint)attr.qp_state;
    values[QP_MAX_SEND_SGE] = (jint)attr.cap.max_send_sge;
    values[QP_MAX_RECV_SGE] = (jint)attr.cap.max_recv_sge;
    values[QP_MAX_RD_ATOMIC] = (jint)attr.max_rd_atomic;
    values[QP_MAX_DEST_RD_ATOMIC] = (jint)attr.max_dest_rd_atomic;
    return sluice_int_array(env, values, QP_FIELDS);
}
