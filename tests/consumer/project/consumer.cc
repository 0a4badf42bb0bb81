// Brings up two host ranks in one process and all-reduces through the installed library.
#include <chorus/chorus.h>

#include <cstdio>
#include <thread>

int main() {
  int version = 0;
  if (chorusGetVersion(&version) != chorusSuccess) return 1;
  chorusComm_t comms[2];
  if (chorusCommInitAll(comms, 2, nullptr) != chorusSuccess) return 2;
  int results[2] = {0, 0};
  std::thread t([&] {
    int x = 2;
    chorusAllReduce(&x, &results[1], 1, chorusInt32, chorusSum, comms[1], nullptr);
  });
  int x = 1;
  chorusAllReduce(&x, &results[0], 1, chorusInt32, chorusSum, comms[0], nullptr);
  t.join();
  chorusCommDestroy(comms[0]);
  chorusCommDestroy(comms[1]);
  printf("chorus %d: 1 + 2 = %d, %d\n", version, results[0], results[1]);
  return results[0] == 3 && results[1] == 3 ? 0 : 3;
}
