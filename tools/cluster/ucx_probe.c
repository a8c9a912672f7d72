/* UCX probe for the emulated cluster (tools/cluster/selftest.sh builds and runs it): does what the
 * library's transport does -- its own UCP context and worker per rank, endpoints from an MPI_Allgather
 * of worker addresses -- and reports which UCX transports each endpoint uses and whether the bytes
 * cross the node's eth0.
 *
 * usage: ucx_probe <ranks per node>   (ranks placed with --map-by ppr:<ranks per node>:node)
 * Rank r sends 8 MiB to the same local rank on the next node, r + ppn; with ppn > 1 also 8 MiB to a
 * rank of its own node. Checks: remote endpoints use tcp over eth0 and their bytes cross eth0;
 * local endpoints use shared memory (sysv / posix / cma) and stay off eth0.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <ucp/api/ucp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG_BYTES (8u << 20)

static uint64_t eth0_tx(void) {
    char line[512];
    unsigned long long v[9], tx = 0;
    FILE *f = fopen("/proc/net/dev", "r");
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':'), *name = line;
        if (!c) continue;
        *c = '\0';
        while (*name == ' ')
            name++;
        if (strcmp(name, "eth0") == 0 && sscanf(c + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
                                                &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9)
            tx = v[8];
    }
    fclose(f);
    return tx;
}

#define UCS_CHECK(call)                                                                                                \
    do {                                                                                                               \
        ucs_status_t s_ = (call);                                                                                      \
        if (s_ != UCS_OK) {                                                                                            \
            fprintf(stderr, "%s failed: %s\n", #call, ucs_status_string(s_));                                          \
            MPI_Abort(MPI_COMM_WORLD, 3);                                                                              \
        }                                                                                                              \
    } while (0)

static void wait_req(ucp_worker_h w, void *req) {
    if (req == NULL) return;
    if (UCS_PTR_IS_ERR(req)) {
        fprintf(stderr, "ucx request failed: %s\n", ucs_status_string(UCS_PTR_STATUS(req)));
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    while (ucp_request_check_status(req) == UCS_INPROGRESS)
        ucp_worker_progress(w);
    ucp_request_free(req);
}

/* A barrier that keeps UCX progressing (peers may need our progress to finish their sends). */
static void ucx_barrier(ucp_worker_h w) {
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        ucp_worker_progress(w);
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    }
}

/* Transports of an endpoint, from ucp_ep_print_info's lane lines. */
static void ep_transports(ucp_ep_h ep, char *out, size_t n) {
    char *buf = NULL, *line, *save = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ucp_ep_print_info(ep, f);
    fclose(f);
    out[0] = '\0';
    for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *tl = strstr(line, "lane[");
        char name[64];
        if (!tl || !(tl = strchr(tl, ':'))) continue;
        if (sscanf(tl + 1, " %*d:%63s", name) == 1 && !strstr(out, name) && strlen(out) + strlen(name) + 2 < n) {
            if (out[0]) strcat(out, " ");
            strcat(out, name);
        }
    }
    free(buf);
}

int main(int argc, char **argv) {
    int rank, size, ppn, i, failures = 0, all_fail = 0;
    ucp_params_t params = {0};
    ucp_worker_params_t wparams = {0};
    ucp_config_t *config;
    ucp_context_h ctx;
    ucp_worker_h worker;
    ucp_address_t *addr;
    size_t addr_len;
    int my_len, *lens, *displs, total = 0;
    char *all;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ppn = argc > 1 ? atoi(argv[1]) : 1;

    /* Same as the library: UCX_* variables, overridden by MPIX_SPARSE_UCX_*. */
    UCS_CHECK(ucp_config_read("MPIX_SPARSE", NULL, &config));
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG;
    UCS_CHECK(ucp_init(&params, config, &ctx));
    ucp_config_release(config);
    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    UCS_CHECK(ucp_worker_create(ctx, &wparams, &worker));
    UCS_CHECK(ucp_worker_get_address(worker, &addr, &addr_len));

    my_len = (int)addr_len;
    lens = malloc(sizeof(int) * size);
    displs = malloc(sizeof(int) * size);
    MPI_Allgather(&my_len, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
    for (i = 0; i < size; i++) {
        displs[i] = total;
        total += lens[i];
    }
    all = malloc(total);
    MPI_Allgatherv(addr, my_len, MPI_BYTE, all, lens, displs, MPI_BYTE, MPI_COMM_WORLD);

    {
        /* peers[0]: next node; peers[1]: a rank of my own node (ranks are node-contiguous). */
        int node_first = rank / ppn * ppn;
        int peers[2] = {(rank + ppn) % size, node_first + (rank - node_first + 1) % ppn};
        int from[2] = {(rank - ppn + size) % size, node_first + (rank - node_first + ppn - 1) % ppn};
        const char *what[2] = {"remote", "local"};
        int npeers = ppn > 1 ? 2 : 1;
        char *sbuf = malloc(MSG_BYTES), *rbuf = malloc(MSG_BYTES);
        memset(sbuf, 7, MSG_BYTES);
        for (i = 0; i < npeers; i++) {
            ucp_ep_params_t ep_params = {0};
            ucp_ep_h ep;
            ucp_request_param_t rp = {0};
            char tls[256], text[512];
            uint64_t tx0, tx1;
            int ok;
            ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
            ep_params.address = (const ucp_address_t *)(all + displs[peers[i]]);
            UCS_CHECK(ucp_ep_create(worker, &ep_params, &ep));
            ep_transports(ep, tls, sizeof tls);
            ucx_barrier(worker);
            tx0 = eth0_tx();
            {
                void *rreq = ucp_tag_recv_nbx(worker, rbuf, MSG_BYTES, (ucp_tag_t)from[i], (ucp_tag_t)-1, &rp);
                void *sreq = ucp_tag_send_nbx(ep, sbuf, MSG_BYTES, (ucp_tag_t)rank, &rp);
                wait_req(worker, sreq);
                wait_req(worker, rreq);
            }
            ucx_barrier(worker);
            tx1 = eth0_tx();
            if (i == 0)
                ok = strstr(tls, "tcp/eth0") && !strstr(tls, "sysv") && !strstr(tls, "posix") && !strstr(tls, "cma") &&
                     tx1 - tx0 >= MSG_BYTES;
            else
                ok = !strstr(tls, "tcp") && tx1 - tx0 < (1u << 20);
            ok &= rbuf[0] == 7 && rbuf[MSG_BYTES - 1] == 7;
            snprintf(text, sizeof text, "rank %d -> %d (%s): transports [%s], eth0 tx +%llu bytes: %s", rank, peers[i],
                     what[i], tls, (unsigned long long)(tx1 - tx0), ok ? "ok" : "FAILED");
            {
                char *lines = rank == 0 ? malloc((size_t)size * 512) : NULL;
                int r;
                MPI_Gather(text, 512, MPI_CHAR, lines, 512, MPI_CHAR, 0, MPI_COMM_WORLD);
                for (r = 0; rank == 0 && r < size; r++)
                    printf("%s\n", lines + 512 * r);
                free(lines);
            }
            failures += !ok;
            wait_req(worker, ucp_ep_close_nbx(ep, &rp)); /* flush mode: peers keep progressing */
            ucx_barrier(worker);
        }
        free(sbuf);
        free(rbuf);
    }

    MPI_Allreduce(&failures, &all_fail, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("ucx probe: %s\n", all_fail ? "FAIL" : "PASS");
    ucp_worker_release_address(worker, addr);
    ucp_worker_destroy(worker);
    ucp_cleanup(ctx);
    free(all);
    free(lens);
    free(displs);
    MPI_Finalize();
    return all_fail ? 1 : 0;
}
