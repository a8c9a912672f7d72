/* Self-test program for the emulated cluster (tools/cluster/selftest.sh builds and runs it).
 *
 * usage: selftest <expected ranks per node> <link rate in bit/s, 0 = unshaped>
 *
 * Checks, printing one "check ... ok|FAILED" line each on rank 0, and exits non-zero on failure:
 *   - MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups exactly the ranks of one node (namespace),
 *     with the expected local size;
 *   - a 16 MiB MPI_Allreduce gives the right sum (and its time);
 *   - a large MPI_Send between two nodes crosses the node's eth0 (its byte counters grow by at least
 *     the payload) at a rate near the shaped link rate;
 *   - a large MPI_Send inside one node does not touch eth0 (shared memory).
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODE_IF "eth0"

/* Bytes sent and received on NODE_IF, as this process's network namespace counts them. */
static void if_bytes(uint64_t *rx, uint64_t *tx) {
    char line[512];
    FILE *f = fopen("/proc/net/dev", "r");
    *rx = *tx = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        char *name = line;
        unsigned long long v[9];
        if (!colon) continue;
        *colon = '\0';
        while (*name == ' ')
            name++;
        if (strcmp(name, NODE_IF) != 0) continue;
        if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7], &v[8]) == 9) {
            *rx = v[0];
            *tx = v[8];
        }
    }
    fclose(f);
}

static int failures = 0;

static void check(int rank, int ok, const char *what) {
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) printf("check %-58s %s\n", what, all_ok ? "ok" : "FAILED");
    if (!all_ok) failures++;
}

/* Time a one-way transfer of n bytes from src to dst (closed by a zero-byte ack); returns seconds on
 * src and dst, 0 elsewhere. Adds the eth0 tx delta of src to *tx_delta (on src). */
static double timed_send(int rank, int src, int dst, char *buf, size_t n, uint64_t *tx_delta) {
    double t = 0;
    uint64_t rx0, tx0, rx1, tx1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == src) {
        if_bytes(&rx0, &tx0);
        t = MPI_Wtime();
        MPI_Send(buf, (int)n, MPI_CHAR, dst, 1, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_CHAR, dst, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t = MPI_Wtime() - t;
        if_bytes(&rx1, &tx1);
        *tx_delta = tx1 - tx0;
    } else if (rank == dst) {
        t = MPI_Wtime();
        MPI_Recv(buf, (int)n, MPI_CHAR, src, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_CHAR, src, 2, MPI_COMM_WORLD);
        t = MPI_Wtime() - t;
    }
    return t;
}

int main(int argc, char **argv) {
    int rank, size, lrank, lsize, ppn, nodes;
    double rate_bps;
    char host[256] = "", text[160];
    MPI_Comm local;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0) fprintf(stderr, "usage: %s <ranks per node> <rate bit/s>\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ppn = atoi(argv[1]);
    rate_bps = atof(argv[2]);
    nodes = size / ppn;
    gethostname(host, sizeof host - 1);

    /* 1. Locality: the shared-memory split must be one namespace = one node. */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    {
        char *all = calloc((size_t)size, 64), *lall = calloc((size_t)lsize, 64), me[64] = "";
        uint64_t rx, tx;
        int same = 1, i, distinct = 0;
        if_bytes(&rx, &tx);
        snprintf(me, sizeof me, "%s", host);
        MPI_Allgather(me, 64, MPI_CHAR, all, 64, MPI_CHAR, MPI_COMM_WORLD);
        MPI_Allgather(me, 64, MPI_CHAR, lall, 64, MPI_CHAR, local);
        for (i = 0; i < lsize; i++)
            same &= strcmp(lall + 64 * i, me) == 0;
        for (i = 0; i < size; i++) {
            int j, seen = 0;
            for (j = 0; j < i; j++)
                seen |= strcmp(all + 64 * i, all + 64 * j) == 0;
            distinct += !seen;
        }
        for (i = 0; i < size; i++) {
            if (rank == i) {
                printf("rank %d/%d node %s local %d/%d eth0 rx %llu tx %llu\n", rank, size, host, lrank, lsize,
                       (unsigned long long)rx, (unsigned long long)tx);
                fflush(stdout);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        snprintf(text, sizeof text, "split_type(SHARED) local size == %d", ppn);
        check(rank, lsize == ppn, text);
        check(rank, same, "split_type(SHARED) groups ranks of one node only");
        snprintf(text, sizeof text, "%d distinct node hostnames", nodes);
        check(rank, distinct == nodes, text);
        free(all);
        free(lall);
    }

    /* 2. 16 MiB MPI_Allreduce. */
    {
        const int n = 16 << 20 >> 2; /* floats */
        float *in = malloc(sizeof(float) * n), *out = malloc(sizeof(float) * n);
        int i, ok = 1;
        double t, tmax;
        for (i = 0; i < n; i++)
            in[i] = (float)(rank + 1);
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        t = MPI_Wtime() - t;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        for (i = 0; i < n; i++)
            ok &= out[i] == (float)size * (size + 1) / 2;
        if (rank == 0) printf("allreduce 16 MiB float on %d ranks: %.3f s\n", size, tmax);
        check(rank, ok, "allreduce 16 MiB result");
        free(in);
        free(out);
    }

    /* 3./4. Point-to-point: across nodes (rank 0 -> first rank of node 1) and inside node 0. */
    {
        const size_t n = 32u << 20;
        char *buf = malloc(n);
        uint64_t tx_remote = 0, tx_local = 0;
        double t_remote, t_local, gbps;
        int remote = ppn, ok;
        memset(buf, 1, n);
        timed_send(rank, 0, remote, buf, 1 << 20, &tx_remote); /* warm up connections */
        t_remote = timed_send(rank, 0, remote, buf, n, &tx_remote);
        gbps = n * 8.0 / t_remote / 1e9;
        if (rank == 0) {
            printf("send 32 MiB node 0 -> node 1: %.3f s = %.3f Gbit/s (link %.3f Gbit/s), eth0 tx %llu bytes\n",
                   t_remote, gbps, rate_bps / 1e9, (unsigned long long)tx_remote);
        }
        check(rank, rank != 0 || tx_remote >= n, "cross-node send travels over eth0 (tx >= payload)");
        if (rate_bps > 0) {
            /* Shaped: at most ~10% above the rate (tbf bucket); the lower bound only catches a broken link
             * (2 shared cores: a concurrent build slows veth traffic). */
            ok = rank != 0 || (gbps * 1e9 <= rate_bps * 1.10 && gbps * 1e9 >= rate_bps * 0.3);
            check(rank, ok, "cross-node bandwidth within [0.3, 1.1] x link rate");
        }
        if (ppn > 1) {
            timed_send(rank, 0, 1, buf, 1 << 20, &tx_local);
            t_local = timed_send(rank, 0, 1, buf, n, &tx_local);
            if (rank == 0) {
                printf("send 32 MiB inside node 0: %.3f s = %.3f Gbit/s, eth0 tx %llu bytes\n", t_local,
                       n * 8.0 / t_local / 1e9, (unsigned long long)tx_local);
            }
            check(rank, rank != 0 || tx_local < (1u << 20), "intra-node send stays off eth0 (shared memory)");
        }
        free(buf);
    }

    MPI_Comm_free(&local);
    if (rank == 0) printf("selftest program: %s\n", failures ? "FAIL" : "PASS");
    MPI_Finalize();
    return failures ? 1 : 0;
}
