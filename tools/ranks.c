/*
 * ranks.c: the MPI job that `dlscan scan` may run in: `mpiexec -n P dlscan scan ...` scans one
 * file, each rank its slice, into one output file (scan.c, scan_ranks). Where the command is
 * built with the MPI binding (DLSCAN_CLI_HAVE_MPI, tools/meson.build) and mpiexec started it
 * (its environment says so), MPI is initialized before any command runs; elsewhere there is
 * one rank, and every function here is trivial.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "cli.h"

#ifdef DLSCAN_CLI_HAVE_MPI
#include "dlscan_mpi.h"

static int started, rank, size = 1;

/* Open MPI, MPICH (Hydra) and PMIx launchers set one of these. */
static int launched_by_mpiexec(void)
{
    static const char *const variables[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof variables / sizeof variables[0]; ++i)
        if (getenv(variables[i]))
            return 1;
    return 0;
}

int ranks_start(int *argc, char ***argv)
{
    if (!launched_by_mpiexec())
        return 1;
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return -1;
    started = 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

int ranks_rank(void) { return rank; }

int ranks_count(void) { return size; }

dlscan_status ranks_scan(dlscan_handle_t h, const dlscan_scan_args *a)
{
    return dlscan_mpi_scan(h, a, MPI_COMM_WORLD, NULL);
}

int ranks_worst(int status)
{
    int worst = status;
    if (size > 1)
        MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

void ranks_share(void *bytes, size_t count)
{
    if (size > 1)
        MPI_Bcast(bytes, (int)count, MPI_BYTE, 0, MPI_COMM_WORLD);
}

void ranks_stop(void)
{
    if (started)
        MPI_Finalize();
    started = 0;
}

#else /* one rank */

int ranks_start(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 1;
}

int ranks_rank(void) { return 0; }

int ranks_count(void) { return 1; }

dlscan_status ranks_scan(dlscan_handle_t h, const dlscan_scan_args *a) { return dlscan_scan(h, a, NULL); }

int ranks_worst(int status) { return status; }

void ranks_share(void *bytes, size_t count) { (void)bytes, (void)count; }

void ranks_stop(void) {}

#endif
