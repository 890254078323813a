/*
 * Completion entry points of NativeDispatcher: polling completion queues, arming and
 * waiting for completion events.
 */
#include <errno.h>
#include <poll.h>
#include <infiniband/verbs.h>

#include "disni_abi.h"

#define DISPATCHER(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

int sluice_wait_readable(int fd, int timeout_ms) {
    struct pollfd pfd = { .fd = fd, .events = POLLIN, .revents = 0 };
    int ready;
    do {
        ready = poll(&pfd, 1, timeout_ms < 0 ? -1 : timeout_ms);
    } while (ready < 0 && errno == EINTR);
    if (ready < 0) {
        return -errno;
    }
    if (ready == 0) {
        return 0;
    }
    /* A broken descriptor never becomes readable: report it, or the caller would spin. */
    if ((pfd.revents & POLLNVAL) != 0) {
        return -EBADF;
    }
    if ((pfd.revents & POLLIN) != 0) {
        return 1;
    }
    return (pfd.revents & POLLERR) != 0 ? -EIO : -EPIPE;
}

/*
 * Polls up to `entries` completions into the buffer at wc_out, which holds DiSNI's
 * completion records (byte-identical to struct ibv_wc). The caller guarantees room for
 * `entries` records. Returns the number polled or a negative value on failure.
 */
JNIEXPORT jint JNICALL DISPATCHER(pollCQ)(JNIEnv *env, jobject self, jlong cq, jint entries, jlong wc_out) {
    (void)env; (void)self;
    if (cq == 0 || wc_out == 0 || entries < 0) {
        return -EINVAL;
    }
    return ibv_poll_cq(SLUICE_PTR(struct ibv_cq, cq), entries, SLUICE_PTR(struct ibv_wc, wc_out));
}

JNIEXPORT jint JNICALL DISPATCHER(reqNotifyCQ)(JNIEnv *env, jobject self, jlong cq, jint solicited_only) {
    (void)env; (void)self;
    if (cq == 0) {
        return -EINVAL;
    }
    return ibv_req_notify_cq(SLUICE_PTR(struct ibv_cq, cq), solicited_only != 0);
}

/*
 * Waits up to timeout_ms (negative: no limit) for a completion event on the channel.
 * Returns 0 when an event was consumed (the caller acknowledges it with _ackCqEvent) and
 * -1 when none arrived in time. A channel that failed (error or hang-up on its descriptor,
 * a failed read) throws IOException: it will never deliver an event again.
 */
JNIEXPORT jint JNICALL DISPATCHER(getCqEvent)(JNIEnv *env, jobject self, jlong channel_handle, jint timeout_ms) {
    (void)self;
    struct ibv_comp_channel *channel = SLUICE_PTR(struct ibv_comp_channel, channel_handle);
    if (channel == NULL) {
        sluice_throw_io_msg(env, "ibv_get_cq_event: no completion channel");
        return -1;
    }
    int ready = sluice_wait_readable(channel->fd, timeout_ms);
    if (ready < 0) {
        sluice_throw_io(env, "waiting for a completion event", -ready);
        return -1;
    }
    if (ready == 0) {
        return -1;
    }
    struct ibv_cq *cq = NULL;
    void *cq_context = NULL;
    if (ibv_get_cq_event(channel, &cq, &cq_context) != 0) {
        sluice_throw_io(env, "ibv_get_cq_event", errno != 0 ? errno : EIO);
        return -1;
    }
    return 0;
}

JNIEXPORT jint JNICALL DISPATCHER(ackCqEvent)(JNIEnv *env, jobject self, jlong cq, jint events) {
    (void)env; (void)self;
    if (cq == 0 || events < 0) {
        return -EINVAL;
    }
    ibv_ack_cq_events(SLUICE_PTR(struct ibv_cq, cq), (unsigned int)events);
    return 0;
}
