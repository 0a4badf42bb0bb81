// A small element tree for NCCL's topology and graph XML: names, attributes in file order, children and the
// line each element starts on (for error messages). Parsing uses tinyxml2; detection builds trees directly.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace chorus::topology {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<XmlElement> children;
  int line = 0;

  // The attribute's value, or nullptr when absent.
  const std::string* attr(const std::string& key) const;
  // Sets (or adds) an attribute.
  void set(const std::string& key, const std::string& value);
  XmlElement& add(const std::string& childName);
  // The first child of this name, or nullptr.
  const XmlElement* child(const std::string& childName) const;
};

// Parses XML text. Throws chorus::Error (invalid argument) naming `source`, the line and the problem when the
// text is not well-formed XML or is empty.
XmlElement parseXml(const std::string& text, const std::string& source);
// Reads and parses a file; an unreadable file is an error naming it.
XmlElement readXmlFile(const std::string& path);
// Indented XML text of a tree (attribute values escaped).
std::string writeXml(const XmlElement& root);
// Writes writeXml(root) to a file; an error names the file.
void writeXmlFile(const XmlElement& root, const std::string& path);

}  // namespace chorus::topology
