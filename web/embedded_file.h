#pragma once
// A static file built into the binary by cmake/embed_files.cmake.
#include <string_view>
#include <vector>

namespace themis::web {

struct EmbeddedFile {
  std::string_view path;          // "/index.html"
  std::string_view content_type;  // from its extension
  std::string_view body;
};

}  // namespace themis::web
