#include "topology/xml_tree.h"

#include <tinyxml2.h>

#include <fstream>
#include <sstream>

#include "base/error.h"

namespace chorus::topology {
namespace {

// tinyxml2 recurses once per nesting level; a hostile file must not exhaust the stack.
constexpr int kMaxDepth = 64;

void convert(const tinyxml2::XMLElement* in, XmlElement* out, int depth, const std::string& source) {
  CHORUS_CHECK_ARG(depth < kMaxDepth, "topology file ", source, ", line ", in->GetLineNum(), ", element <", in->Name(),
                   ">: nested deeper than ", kMaxDepth, " levels");
  out->name = in->Name();
  out->line = in->GetLineNum();
  for (const tinyxml2::XMLAttribute* a = in->FirstAttribute(); a != nullptr; a = a->Next())
    out->attrs.emplace_back(a->Name(), a->Value());
  for (const tinyxml2::XMLElement* c = in->FirstChildElement(); c != nullptr; c = c->NextSiblingElement()) {
    out->children.emplace_back();
    convert(c, &out->children.back(), depth + 1, source);
  }
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void write(const XmlElement& e, int depth, std::ostringstream& os) {
  std::string indent(2 * depth, ' ');
  os << indent << "<" << e.name;
  for (const auto& [k, v] : e.attrs) os << " " << k << "=\"" << escape(v) << "\"";
  if (e.children.empty()) {
    os << "/>\n";
    return;
  }
  os << ">\n";
  for (const auto& c : e.children) write(c, depth + 1, os);
  os << indent << "</" << e.name << ">\n";
}

}  // namespace

const std::string* XmlElement::attr(const std::string& key) const {
  for (const auto& kv : attrs)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

void XmlElement::set(const std::string& key, const std::string& value) {
  for (auto& kv : attrs) {
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  }
  attrs.emplace_back(key, value);
}

XmlElement& XmlElement::add(const std::string& childName) {
  children.emplace_back();
  children.back().name = childName;
  return children.back();
}

const XmlElement* XmlElement::child(const std::string& childName) const {
  for (const auto& c : children)
    if (c.name == childName) return &c;
  return nullptr;
}

XmlElement parseXml(const std::string& text, const std::string& source) {
  CHORUS_CHECK_ARG(text.find_first_not_of(" \t\r\n") != std::string::npos, "topology file ", source,
                   ": the file is empty (expected a <system> element)");
  tinyxml2::XMLDocument doc;
  if (doc.Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS) {
    CHORUS_THROW(Status::kInvalidArgument, "topology file ", source, ", line ", doc.ErrorLineNum(),
                 ": malformed XML: ", doc.ErrorStr());
  }
  const tinyxml2::XMLElement* root = doc.RootElement();
  CHORUS_CHECK_ARG(root != nullptr, "topology file ", source, ": no element in the file");
  XmlElement out;
  convert(root, &out, 0, source);
  return out;
}

XmlElement readXmlFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  CHORUS_CHECK_ARG(f.good(), "topology file ", path, ": cannot open it");
  std::ostringstream os;
  os << f.rdbuf();
  return parseXml(os.str(), path);
}

std::string writeXml(const XmlElement& root) {
  std::ostringstream os;
  write(root, 0, os);
  return os.str();
}

void writeXmlFile(const XmlElement& root, const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  CHORUS_CHECK_ARG(f.good(), "cannot write the XML file ", path);
  f << writeXml(root);
  CHORUS_CHECK_ARG(f.good(), "cannot write the XML file ", path);
}

}  // namespace chorus::topology
