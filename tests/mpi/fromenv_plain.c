/* chorusCommInitFromEnv under plain `mpirun -np N` on one host, with no variable exported: the ranks meet
 * through the job's rendezvous file. Written in C against the public header; it does not call MPI. Each rank
 * creates two communicators in a row, all-reduces its rank on both and checks every result. */
#include <chorus/chorus.h>
#include <stdio.h>

int main(void) {
  for (int round = 0; round < 2; ++round) {
    chorusComm_t comm = NULL;
    if (chorusCommInitFromEnv(&comm, NULL) != chorusSuccess) {
      fprintf(stderr, "chorusCommInitFromEnv: %s\n", chorusGetLastError(NULL));
      return 2;
    }
    int rank = -1, n = 0;
    chorusCommUserRank(comm, &rank);
    chorusCommCount(comm, &n);
    long long in[1000], out[1000];
    for (int i = 0; i < 1000; ++i) in[i] = (long long)rank * 1000 + i;
    if (chorusAllReduce(in, out, 1000, chorusInt64, chorusSum, comm, NULL) != chorusSuccess) {
      fprintf(stderr, "chorusAllReduce: %s\n", chorusGetLastError(comm));
      return 3;
    }
    for (int i = 0; i < 1000; ++i) {
      if (out[i] != 1000LL * n * (n - 1) / 2 + (long long)n * i) {
        fprintf(stderr, "rank %d: element %d is %lld\n", rank, i, out[i]);
        return 4;
      }
    }
    if (chorusCommFinalize(comm) != chorusSuccess || chorusCommDestroy(comm) != chorusSuccess) return 5;
    if (round == 1 && rank == 0) printf("fromenv_plain: %d ranks met twice without an address\n", n);
  }
  return 0;
}
