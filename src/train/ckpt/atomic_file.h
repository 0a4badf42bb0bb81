// Files that appear whole or not at all: written to a temporary name, flushed to disk with fsync, then
// renamed over the final name (and the directory flushed), so a crash in the middle of a save never leaves a
// half-written checkpoint under a name a resume would read.
#ifndef CHORUS_TRAIN_CKPT_ATOMIC_FILE_H_
#define CHORUS_TRAIN_CKPT_ATOMIC_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace chorus::train {

// Writes `bytes` to `path` atomically; throws std::runtime_error naming the path on failure.
void writeFileAtomic(const std::string& path, const std::vector<uint8_t>& bytes);
// Reads the whole file; throws std::runtime_error naming the path when it cannot.
std::vector<uint8_t> readWholeFile(const std::string& path);
// fsync of a directory, so a rename inside it is durable.
void syncDirectory(const std::string& dir);
// CRC-32 (zlib's) of a byte range.
uint32_t crc32Of(const uint8_t* data, size_t n);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_CKPT_ATOMIC_FILE_H_
