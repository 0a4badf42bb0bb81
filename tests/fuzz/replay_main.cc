// Runs a libFuzzer target's entry point over every file of a corpus folder, so that the corpus is a
// regression test with any compiler (no -fsanitize=fuzzer needed).
#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  int files = 0;
  for (int i = 1; i < argc; ++i) {
    DIR* d = opendir(argv[i]);
    if (d == nullptr) continue;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string path = std::string(argv[i]) + "/" + e->d_name;
      std::ifstream f(path, std::ios::binary);
      std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++files;
    }
    closedir(d);
  }
  // Always run a few synthetic inputs too, so an empty corpus still exercises the target.
  const uint8_t zeros[64] = {};
  for (size_t n = 0; n <= sizeof(zeros); n += 8) LLVMFuzzerTestOneInput(zeros, n);
  printf("replayed %d corpus files\n", files);
  return 0;
}
