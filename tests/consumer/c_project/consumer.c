/* A C program outside the Chorus tree: two host ranks in this process, driven from one thread through a
 * group, all-reduce with a PreMulSum operation and broadcast in place. Built against an installed Chorus,
 * statically (chorus::chorus_static, pkg-config --static) or against the shared library. */
#include <chorus/chorus.h>
#include <stdio.h>

int main(void) {
  int version = 0;
  if (chorusGetVersion(&version) != chorusSuccess || version != CHORUS_VERSION_CODE) return 1;
  chorusComm_t comms[2];
  if (chorusCommInitAll(comms, 2, NULL) != chorusSuccess) return 2;
  double in[2][4], out[2][4];
  chorusRedOp_t ops[2];
  double half = 0.5;
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 4; ++i) in[r][i] = (r + 1) * (i + 1);
    if (chorusRedOpCreatePreMulSum(&ops[r], &half, chorusFloat64, chorusScalarHostImmediate, comms[r])) return 3;
  }
  chorusGroupStart();
  for (int r = 0; r < 2; ++r) chorusAllReduce(in[r], out[r], 4, chorusFloat64, ops[r], comms[r], NULL);
  if (chorusGroupEnd() != chorusSuccess) return 4;
  chorusGroupStart();
  for (int r = 0; r < 2; ++r) chorusBcast(out[r], 4, chorusFloat64, 1, comms[r], NULL);
  if (chorusGroupEnd() != chorusSuccess) return 5;
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 4; ++i) {
      if (out[r][i] != 1.5 * (i + 1)) return 6;
    }
    chorusRedOpDestroy(ops[r], comms[r]);
    chorusCommDestroy(comms[r]);
  }
  printf("chorus %d from C: 0.5*(1+2)*(i+1) = %g %g %g %g\n", version, out[0][0], out[0][1], out[0][2], out[0][3]);
  return 0;
}
