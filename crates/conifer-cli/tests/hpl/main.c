/* A standalone driver for the HPL inside HPCC 1.5's sources (HPCC renamed HPL's main to
   HPL_main and runs it among benchmarks whose communication depends on time). HPL reads its
   parameters from hpccinf.txt in the working directory. */
#include <stdio.h>
#include <mpi.h>
#include "hpl.h"

int HPL_main(int argc, char **argv, HPL_RuntimeData *data, int *failure);

/* HPL_pdinfo falls back to HPCC's defaults when hpccinf.txt cannot be read: refuse instead. */
int HPCC_Defaults(HPL_T_test *test, int *ns, int *n, int *nbs, int *nb, HPL_T_ORDER *pmap,
                  int *npqs, int *p, int *q, int *npfs, HPL_T_FACT *pf, int *nbms, int *nbm,
                  int *ndvs, int *ndv, int *nrfs, HPL_T_FACT *rf, int *ntps, HPL_T_TOP *tp,
                  int *ndhs, int *dh, HPL_T_SWAP *fswap, int *tswap, int *l1notran,
                  int *unotran, int *equil, int *align, MPI_Comm comm) {
  fprintf(stderr, "hpl: hpccinf.txt is missing or malformed\n");
  MPI_Abort(comm, 1);
  return 1;
}

int main(int argc, char **argv) {
  HPL_RuntimeData data;
  int failure = 0;
  MPI_Init(&argc, &argv);
  HPL_main(argc, argv, &data, &failure);
  MPI_Finalize();
  return failure;
}
