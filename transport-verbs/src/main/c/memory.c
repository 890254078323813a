/*
 * Memory registration entry points of NativeDispatcher. A memory region handle is a
 * struct ibv_mr *.
 */
#include <errno.h>
#include <infiniband/verbs.h>

#include "disni_abi.h"

#define DISPATCHER(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

/*
 * Registers [address, address + length) with the given access bits (IbvMr.IBV_ACCESS_*,
 * equal to enum ibv_access_flags). Writes lkey, rkey and handle to the three
 * out-addresses and returns the region handle, or -errno (NatRegMrCall treats any value
 * <= 0 as failure and reports it).
 */
JNIEXPORT jlong JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1regMr(
        JNIEnv *env, jobject self, jlong pd, jlong address, jint length, jint access,
        jlong lkey_out, jlong rkey_out, jlong handle_out) {
    (void)env; (void)self;
    if (pd == 0 || address == 0 || length <= 0 || lkey_out == 0 || rkey_out == 0 || handle_out == 0) {
        return -EINVAL;
    }
    struct ibv_mr *mr = ibv_reg_mr(SLUICE_PTR(struct ibv_pd, pd), SLUICE_PTR(void, address),
                                   (size_t)(uint32_t)length, access);
    if (mr == NULL) {
        return errno != 0 ? -errno : -EIO;
    }
    *SLUICE_PTR(uint32_t, lkey_out) = mr->lkey;
    *SLUICE_PTR(uint32_t, rkey_out) = mr->rkey;
    *SLUICE_PTR(uint32_t, handle_out) = mr->handle;
    return SLUICE_HANDLE(mr);
}

JNIEXPORT void JNICALL DISPATCHER(deregMr)(JNIEnv *env, jobject self, jlong mr) {
    (void)self;
    if (mr == 0) {
        sluice_throw_io_msg(env, "ibv_dereg_mr: no memory region");
        return;
    }
    int rc = ibv_dereg_mr(SLUICE_PTR(struct ibv_mr, mr));
    if (rc != 0) {
        sluice_throw_io(env, "ibv_dereg_mr", rc);
    }
}

/*
 * Asks the device to fault in [address, address + length) of an on-demand-paging region
 * (ibv_advise_mr with PREFETCH, waiting for completion). Returns 0 or -errno.
 */
JNIEXPORT jint JNICALL DISPATCHER(expPrefetchMr)(JNIEnv *env, jobject self, jlong mr_handle,
                                                 jlong address, jint length) {
    (void)self;
    struct ibv_mr *mr = SLUICE_PTR(struct ibv_mr, mr_handle);
    if (mr == NULL || length <= 0) {
        sluice_throw_io_msg(env, "prefetch: a memory region and a positive length are required");
        return -EINVAL;
    }
    struct ibv_sge sge = { .addr = (uint64_t)address, .length = (uint32_t)length, .lkey = mr->lkey };
    int rc = ibv_advise_mr(mr->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
    return rc == 0 ? 0 : -rc;
}
