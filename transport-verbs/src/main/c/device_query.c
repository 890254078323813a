/*
 * The project's own entry point beside DiSNI's: what kind of device a bound rdma_cm id
 * reached (node and transport type, the port's link layer, the device's name and the most
 * scatter/gather entries one RDMA READ may land in). DiSNI 2.1 has no call for it; the
 * provider tells the fabric (InfiniBand, RoCE, iWARP) from these and logs it.
 */
#include <string.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "disni_abi.h"

#define QUERY(name) Java_io_sluice_transport_verbs_rc_DeviceQuery_##name

/* Order of the values query0 returns. */
enum { DEV_NODE_TYPE, DEV_TRANSPORT_TYPE, DEV_LINK_LAYER, DEV_MAX_SGE_RD, DEV_PORT, DEV_FIELDS };

/* The rdma_cm id behind a handle if it is bound to a device; NULL with an IOException pending otherwise. */
static struct rdma_cm_id *bound_id(JNIEnv *env, jlong id_handle) {
    struct rdma_cm_id *id = SLUICE_PTR(struct rdma_cm_id, id_handle);
    if (id == NULL || id->verbs == NULL) {
        sluice_throw_io_msg(env, "device query: the rdma_cm id is bound to no device");
        return NULL;
    }
    return id;
}

JNIEXPORT jintArray JNICALL QUERY(query0)(JNIEnv *env, jclass cls, jlong id_handle) {
    (void)cls;
    struct rdma_cm_id *id = bound_id(env, id_handle);
    if (id == NULL) {
        return NULL;
    }
    struct ibv_device_attr device;
    struct ibv_port_attr port;
    memset(&device, 0, sizeof device);
    memset(&port, 0, sizeof port);
    int rc = ibv_query_device(id->verbs, &device);
    if (rc != 0) {
        sluice_throw_io(env, "ibv_query_device", rc);
        return NULL;
    }
    uint8_t port_num = id->port_num != 0 ? id->port_num : 1;
    rc = ibv_query_port(id->verbs, port_num, &port);
    if (rc != 0) {
        sluice_throw_io(env, "ibv_query_port", rc);
        return NULL;
    }
    jint values[DEV_FIELDS];
    values[DEV_NODE_TYPE] = (jint)id->verbs->device->node_type;
    values[DEV_TRANSPORT_TYPE] = (jint)id->verbs->device->transport_type;
    values[DEV_LINK_LAYER] = (jint)port.link_layer;
    values[DEV_MAX_SGE_RD] = (jint)device.max_sge_rd;
    values[DEV_PORT] = (jint)port_num;
    return sluice_int_array(env, values, DEV_FIELDS);
}

JNIEXPORT jstring JNICALL QUERY(name0)(JNIEnv *env, jclass cls, jlong id_handle) {
    (void)cls;
    struct rdma_cm_id *id = bound_id(env, id_handle);
    if (id == NULL) {
        return NULL;
    }
    const char *name = ibv_get_device_name(id->verbs->device);
    return (*env)->NewStringUTF(env, name != NULL ? name : "");
}
