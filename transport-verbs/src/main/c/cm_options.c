/*
 * The project's own entry point beside DiSNI's (io.sluice.transport.verbs.rc.CmOptions):
 * the local ACK timeout of a connection's queue pair (rdma_set_option with
 * RDMA_OPTION_ID_ACK_TIMEOUT), set on the id before rdma_connect or rdma_accept so that
 * librdmacm applies it when it moves the queue pair to RTS. DiSNI 2.1 has no call for it.
 */
#include <errno.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>

#include "disni_abi.h"

#define POLICY(name) Java_io_sluice_transport_verbs_rc_CmOptions_##name

/* Returns 0, or the errno rdma_set_option failed with (the caller logs it and goes on). */
JNIEXPORT jint JNICALL POLICY(setAckTimeout0)(JNIEnv *env, jclass cls, jlong id_handle, jint exponent) {
    (void)env; (void)cls;
    struct rdma_cm_id *id = SLUICE_PTR(struct rdma_cm_id, id_handle);
    if (id == NULL || exponent < 0 || exponent > 31) {
        return EINVAL;
    }
    uint8_t timeout = (uint8_t)exponent;
    if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout) != 0) {
        return errno != 0 ? errno : EIO;
    }
    return 0;
}
